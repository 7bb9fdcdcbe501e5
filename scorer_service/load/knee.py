"""The knee: the first level of concurrency at which the agent degraded, and the gate on it.

Steps are compared with the first one (the baseline, normally one call at a
time). The knee is the first later step whose p95 response latency exceeds
``max_p95_ms`` (default: twice the baseline's p95) or whose success rate
fell more than ``max_drop`` below the baseline's. Steps that say nothing
about the agent are left out of the search, whatever their figures:

- a **harness-limited** step (the bridge or the callers were saturated:
  :mod:`vae.scorer_service.load.headroom`), even if its latency rose;
- a **partial** step (cancelled midway);
- a step with no latency measured and no verdict decided.

``held`` is the largest step before the knee that was measured honestly (or,
without a knee, the largest honest step): what the agent is known to hold.

The gate (``--min-concurrency N``): passed when ``held`` >= N; failed when
the agent degraded with ``held`` below N and every step between was
measured; could not decide when the baseline is unusable, when a left-out
step lies between ``held`` and the knee, or when no knee was found but the
honest steps never reached N (nothing failed, nothing proved).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: The default threshold: the baseline's p95 times this.
DEFAULT_P95_FACTOR = 2.0
#: The default largest fall of the success rate below the baseline's.
DEFAULT_MAX_DROP = 0.10


@dataclass(frozen=True)
class StepPoint:
    concurrency: int
    p95_ms: float | None
    success_rate: float | None
    harness_limited: bool = False
    partial: bool = False

    @property
    def measured(self) -> bool:
        return self.p95_ms is not None or self.success_rate is not None

    @property
    def excluded(self) -> str:
        """Why the knee search leaves this step out ("" when it counts)."""
        if self.harness_limited:
            return "harness-limited"
        if self.partial:
            return "partial"
        if not self.measured:
            return "nothing measured"
        return ""


@dataclass(frozen=True)
class Knee:
    #: The step where the agent degraded (None: not found).
    concurrency: int | None
    #: False when even the baseline could not be used.
    decided: bool
    reason: str
    #: The largest honest step before the knee (or overall, without a knee).
    held: int | None
    max_p95_ms: float | None
    min_success_rate: float | None
    excluded: dict[int, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "concurrency": self.concurrency,
            "decided": self.decided,
            "reason": self.reason,
            "held": self.held,
            "max_p95_ms": self.max_p95_ms,
            "min_success_rate": self.min_success_rate,
            "excluded": {str(k): v for k, v in self.excluded.items()},
        }


def find_knee(
    steps: Sequence[StepPoint], *, max_p95_ms: float | None = None, max_drop: float | None = None
) -> Knee:
    """The knee of ``steps`` (in the order run, the first being the baseline)."""
    drop = DEFAULT_MAX_DROP if max_drop is None else max_drop
    excluded = {s.concurrency: why for s in steps if (why := s.excluded)}
    if not steps:
        return Knee(None, False, "no step ran", None, max_p95_ms, None, excluded)
    base = steps[0]
    if base.excluded or (base.p95_ms is None and max_p95_ms is None):
        why = base.excluded or "no response latency measured"
        return Knee(
            None, False, f"the baseline step ({base.concurrency}) is unusable: {why}",
            None, max_p95_ms, None, excluded,
        )  # fmt: skip
    limit = max_p95_ms if max_p95_ms is not None else DEFAULT_P95_FACTOR * (base.p95_ms or 0.0)
    floor = None if base.success_rate is None else base.success_rate - drop
    held = base.concurrency
    for step in steps[1:]:
        if step.excluded:
            continue
        why = _degraded(step, limit, floor)
        if why:
            return Knee(step.concurrency, True, why, held, limit, floor, excluded)
        held = step.concurrency
    return Knee(
        None, True, f"no step degraded (p95 <= {limit:.0f} ms{_floor_text(floor)})",
        held, limit, floor, excluded,
    )  # fmt: skip


def _floor_text(floor: float | None) -> str:
    return "" if floor is None else f", success >= {max(floor, 0.0):.0%}"


def _degraded(step: StepPoint, limit: float, floor: float | None) -> str:
    if step.p95_ms is not None and step.p95_ms > limit:
        return f"p95 {step.p95_ms:.0f} ms > {limit:.0f} ms at {step.concurrency} calls"
    if floor is not None and step.success_rate is not None and step.success_rate < floor:
        return (
            f"success {step.success_rate:.0%} < {max(floor, 0.0):.0%} at {step.concurrency} calls"
        )
    return ""


@dataclass(frozen=True)
class GateResult:
    #: 0 passed, 1 failed, 3 could not decide.
    code: int
    line: str


def gate(knee: Knee, min_concurrency: int) -> GateResult:
    """``--min-concurrency N`` on a knee (see the module's rules)."""
    n = min_concurrency
    if not knee.decided or knee.held is None:
        return GateResult(3, f"could not decide whether the agent holds {n} calls: {knee.reason}")
    if knee.held >= n:
        return GateResult(0, f"the agent held {knee.held} calls at once (>= {n})")
    upper = knee.concurrency
    gaps = sorted(c for c in knee.excluded if c > knee.held and (upper is None or c < upper))
    if upper is None:
        shown = f"; steps left out: {gaps}" if gaps else ""
        return GateResult(
            3, f"the agent held every honest step, but the largest was {knee.held} < {n}{shown}"
        )
    if gaps:
        return GateResult(
            3,
            f"the agent degraded at {upper} calls and held {knee.held}; steps {gaps} between "
            f"were left out, so whether it holds {n} is unknown",
        )
    return GateResult(1, f"the agent held only {knee.held} calls at once (< {n}): {knee.reason}")
