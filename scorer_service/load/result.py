"""A load test's result: its steps, the knee, the soak, the advice — one source for every output.

``vae load --json`` prints :meth:`LoadResult.to_dict`, the terminal summary
and the HTML report (``vae.scorer_service.report.load.page``) read the same
objects, so the three never disagree. Per step, at least: ``concurrency``,
``run_id`` (the ordinary run holding its calls), ``calls``,
``success_rate``, ``latency_ms`` {p50, p95, p99}, ``harness_limited`` and
``partial``; at the top, ``knee`` (a concurrency, or null) with its detail
in ``knee_detail``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vae.scorer_service.load.figures import Figures
from vae.scorer_service.load.headroom import Headroom
from vae.scorer_service.load.knee import GateResult, Knee, StepPoint
from vae.scorer_service.load.soak import Soak


@dataclass(frozen=True)
class StepResult:
    index: int
    concurrency: int
    run_id: str
    figures: Figures
    headroom: Headroom
    #: Cancelled midway: what was recorded is kept, the step is not in the knee search.
    partial: bool = False
    wall_s: float = 0.0
    #: The step ended before its time because its planned calls ran out.
    ran_out: bool = False

    @property
    def harness_limited(self) -> bool:
        return self.headroom.harness_limited

    def point(self) -> StepPoint:
        f = self.figures
        return StepPoint(
            self.concurrency, f.latency_ms.p95, f.success_rate, self.harness_limited, self.partial
        )

    def to_dict(self) -> dict[str, Any]:
        f = self.figures.to_dict()
        return {
            "step": self.index,
            "concurrency": self.concurrency,
            "run_id": self.run_id,
            **f,
            "harness_limited": self.harness_limited,
            "harness": self.headroom.to_dict(),
            "partial": self.partial,
            "ran_out": self.ran_out,
            "wall_s": round(self.wall_s, 2),
        }


@dataclass(frozen=True)
class SoakResult:
    concurrency: int
    run_id: str
    soak: Soak
    headroom: Headroom
    partial: bool = False
    ran_out: bool = False
    #: Every run of the soak: more than one when a run's planned calls ran out first.
    run_ids: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        s = self.soak
        drift = s.drift.to_dict() if s.drift is not None else None
        return {
            "concurrency": self.concurrency,
            "run_id": self.run_id,
            "run_ids": list(self.run_ids or [self.run_id]),
            "duration_s": round(s.duration_s, 3),
            "window_s": round(s.window_s, 3),
            **s.overall.to_dict(),
            "drift_ms_per_hour": None if drift is None else drift["drift_ms_per_hour"],
            "drift": drift,
            "windows": [w.to_dict() for w in s.windows],
            "failures_over_time": [
                {"start_s": round(w.start_s, 3), "failures": w.failures} for w in s.windows
            ],
            "harness_limited": self.headroom.harness_limited,
            "harness": self.headroom.to_dict(),
            "partial": self.partial,
            "ran_out": self.ran_out,
        }


@dataclass
class LoadResult:
    load_id: str
    suite: str
    clock: str
    workers: int
    steps: list[StepResult] = field(default_factory=list)
    knee: Knee | None = None
    soak: SoakResult | None = None
    advice: list[str] = field(default_factory=list)
    gate: GateResult | None = None
    #: Cancelled (Ctrl-C): the step under way is partial, later ones never ran.
    interrupted: bool = False
    report: str | None = None
    database: str = ""
    #: The agent under test, as the output names it.
    agent: str = ""

    @property
    def honest(self) -> list[StepResult]:
        """Steps measured honestly (not harness-limited, not partial)."""
        return [s for s in self.steps if not s.harness_limited and not s.partial]

    def to_dict(self) -> dict[str, Any]:
        largest = max((s.concurrency for s in self.honest), default=None)
        return {
            "load_id": self.load_id,
            "suite": self.suite,
            "agent": self.agent,
            "clock": self.clock,
            "workers": self.workers,
            "database": self.database,
            "steps": [s.to_dict() for s in self.steps],
            "knee": None if self.knee is None else self.knee.concurrency,
            "knee_detail": None if self.knee is None else self.knee.to_dict(),
            "largest_honest_concurrency": largest,
            "soak": None if self.soak is None else self.soak.to_dict(),
            "advice": list(self.advice),
            "gate": None
            if self.gate is None
            else {"code": self.gate.code, "message": self.gate.line},
            "interrupted": self.interrupted,
            "report": self.report,
        }
