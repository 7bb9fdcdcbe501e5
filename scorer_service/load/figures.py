"""What a set of calls says about the agent: success, stop reasons, latency, errors.

The same figures serve a step (every call at one level of concurrency) and a
soak window. Rules, so that they mean the same in every output:

- **success rate** = calls whose gating verdict (``is_successful``) passed,
  over calls decided (passed + failed); unscored calls (no judge, an
  unfinished call) are counted beside it, never in it, as in every vae rate;
- **latency** = every agent reply of every call, pooled (not a mean of
  means): its onset after the caller's end of turn on the recorded audio,
  as p50/p95/p99 by nearest rank (every figure one that happened);
- **time to first audio** = each call's first agent audio after its start;
- **errors by kind** = calls that did not end as calls should (the agent's
  end tool, a hang-up) counted per stop reason, plus ``agent_error_reported``
  / ``caller_error_reported`` for calls that ended normally but where that
  bot reported an error (or the bridge reported one of it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vae.scorer_service.load.calls import Call
from vae.scorer_service.timing.metrics import nearest_rank


@dataclass(frozen=True)
class Percentiles:
    """p50/p95/p99 of a set of durations in milliseconds (None when there were none)."""

    count: int
    p50: float | None
    p95: float | None
    p99: float | None

    @classmethod
    def of_seconds(cls, values: Sequence[float]) -> Percentiles:
        ms = [v * 1000.0 for v in values]

        def pick(pct: float) -> float | None:
            value = nearest_rank(ms, pct)
            return None if value is None else round(value, 1)

        return cls(len(ms), pick(50), pick(95), pick(99))

    def to_dict(self) -> dict[str, Any]:
        return {"count": self.count, "p50": self.p50, "p95": self.p95, "p99": self.p99}


@dataclass(frozen=True)
class Figures:
    calls: int
    passed: int
    failed: int
    unscored: int
    #: passed / (passed + failed); None when nothing was decided.
    success_rate: float | None
    latency_ms: Percentiles
    ttfa_ms: Percentiles
    stop_reasons: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "passed": self.passed,
            "failed": self.failed,
            "unscored": self.unscored,
            "success_rate": None if self.success_rate is None else round(self.success_rate, 4),
            "latency_ms": self.latency_ms.to_dict(),
            "ttfa_ms": self.ttfa_ms.to_dict(),
            "stop_reasons": dict(self.stop_reasons),
            "errors": dict(self.errors),
        }


def figures(calls: Sequence[Call]) -> Figures:
    """The figures of ``calls`` (see the module's rules)."""
    verdicts = Counter(c.verdict for c in calls)
    passed, failed = verdicts["passed"], verdicts["failed"]
    decided = passed + failed
    latencies = [lat for c in calls for _, lat in c.latencies]
    ttfa = [c.ttfa_s for c in calls if c.ttfa_s is not None]
    errors = Counter(kind for c in calls if (kind := c.error_kind))
    return Figures(
        calls=len(calls),
        passed=passed,
        failed=failed,
        unscored=len(calls) - decided,
        success_rate=passed / decided if decided else None,
        latency_ms=Percentiles.of_seconds(latencies),
        ttfa_ms=Percentiles.of_seconds(ttfa),
        stop_reasons=dict(sorted(Counter(c.stop_reason or "unknown" for c in calls).items())),
        errors=dict(sorted(errors.items())),
    )
