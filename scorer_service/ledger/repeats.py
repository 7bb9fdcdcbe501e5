"""pass^k and pass@k over repeated trials (τ²-bench's definitions).

For a scenario run n times (decided trials only: ``unscored`` and
``not_applicable`` trials are counted beside, never as passes) with c
successes:

- pass^k = C(c, k) / C(n, k): the chance that k trials drawn without
  replacement *all* succeed — reliability;
- pass@k = 1 − C(n − c, k) / C(n, k): the chance that *at least one* of k
  succeeds.

Run-level (and per-domain) figures average the per-scenario values over the
scenarios that were repeated (n >= 2), for k = 1 .. the smallest n among them,
so every k averages over the same scenarios. Scenario copies are grouped by
the trial naming rule in :mod:`vae.recordings.trials`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from vae.recordings.models import Verdict
from vae.recordings.trials import base_name


def pass_hat(n: int, c: int, k: int) -> float:
    """C(c, k) / C(n, k); requires 1 <= k <= n."""
    return math.comb(c, k) / math.comb(n, k)


def pass_at(n: int, c: int, k: int) -> float:
    """1 − C(n − c, k) / C(n, k); requires 1 <= k <= n."""
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


@dataclass
class Trials:
    """One scenario's trials in one scoring."""

    scenario: str
    domain: str = ""
    passed: int = 0
    failed: int = 0
    undecided: int = 0
    session_ids: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return self.passed + self.failed

    def pass_hat_k(self) -> dict[str, float]:
        return {str(k): pass_hat(self.n, self.passed, k) for k in range(1, self.n + 1)}

    def pass_at_k(self) -> dict[str, float]:
        return {str(k): pass_at(self.n, self.passed, k) for k in range(1, self.n + 1)}

    def as_dict(self) -> dict[str, Any]:
        return {
            "trials": self.n + self.undecided,
            "passed": self.passed,
            "failed": self.failed,
            "undecided": self.undecided,
            "pass_hat_k": self.pass_hat_k(),
            "pass_at_k": self.pass_at_k(),
        }


def group_trials(rows: Iterable[tuple[str, str, str, Verdict | None]]) -> dict[str, Trials]:
    """``(session_id, scenario_name, domain, is_successful verdict)`` rows -> per scenario."""
    out: dict[str, Trials] = {}
    for session_id, name, domain, verdict in rows:
        base = base_name(name)
        t = out.setdefault(base, Trials(base, domain))
        t.session_ids.append(session_id)
        if verdict is Verdict.PASSED:
            t.passed += 1
        elif verdict is Verdict.FAILED:
            t.failed += 1
        else:
            t.undecided += 1
    return out


def averaged(trials: Iterable[Trials]) -> dict[str, dict[str, float]]:
    """``{"pass_hat_k": {k: mean}, "pass_at_k": {k: mean}}`` over repeated scenarios."""
    repeated = [t for t in trials if t.n >= 2]
    if not repeated:
        return {"pass_hat_k": {}, "pass_at_k": {}}
    top = min(t.n for t in repeated)
    hat = {str(k): sum(pass_hat(t.n, t.passed, k) for t in repeated) / len(repeated)
           for k in range(1, top + 1)}  # fmt: skip
    at = {str(k): sum(pass_at(t.n, t.passed, k) for t in repeated) / len(repeated)
          for k in range(1, top + 1)}  # fmt: skip
    return {"pass_hat_k": hat, "pass_at_k": at}


def repeats_summary(trials: dict[str, Trials]) -> dict[str, Any]:
    """What the scoring summary holds: overall, per domain, per scenario."""
    by_domain: dict[str, list[Trials]] = defaultdict(list)
    for t in trials.values():
        by_domain[t.domain].append(t)
    return {
        **averaged(trials.values()),
        "domains": {d: averaged(items) for d, items in sorted(by_domain.items())},
        "scenarios": {
            name: t.as_dict() for name, t in sorted(trials.items()) if t.n + t.undecided >= 2
        },
    }
