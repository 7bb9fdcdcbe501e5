"""A soak: one level of concurrency held for a long time, cut into windows over its clock.

The soak's clock is wall time on the real clock and session time on the
virtual one (where calls run faster than real time, and a call's wall time
says nothing about the agent). On the virtual clock the calls of one slot
run back to back, so a call's place on the soak's clock is the session time
its slot had run before it; the slots are rebuilt from the calls' wall
starts and ends (each call takes the slot that freed earliest before it
started). Each reply is placed at its call's start plus its offset in the
call.

Each window holds the calls that *started* in it (success rate, failures,
errors) and the replies that *happened* in it (p95 latency). The drift over
the whole soak is :func:`vae.scorer_service.load.drift.drift` over every
reply.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vae.scorer_service.load.calls import Call
from vae.scorer_service.load.drift import Drift, drift
from vae.scorer_service.load.figures import Figures, Percentiles, figures


@dataclass(frozen=True)
class Placed:
    """A call and where it started on the soak's clock, seconds."""

    call: Call
    start_s: float


def place(calls: Sequence[Call], clock: str, slots: int) -> list[Placed]:
    """Each call's start on the soak's clock (see the module: real vs virtual)."""
    ordered = sorted(calls, key=lambda c: (c.started_ns, c.session_id))
    if not ordered:
        return []
    if clock != "virtual":
        t0 = ordered[0].started_ns
        return [Placed(c, (c.started_ns - t0) / 1e9) for c in ordered]
    # (wall time the slot freed, session time it has run, slot number): a heap by freeing time.
    free: list[tuple[int, float, int]] = [(0, 0.0, i) for i in range(max(1, slots))]
    heapq.heapify(free)
    placed = []
    for c in ordered:
        _freed, ran, slot = heapq.heappop(free)
        placed.append(Placed(c, ran))
        heapq.heappush(free, (c.ended_ns, ran + c.session_s, slot))
    return placed


@dataclass(frozen=True)
class Window:
    start_s: float
    end_s: float
    #: Calls that started in the window.
    figures: Figures
    #: p95 of the replies that happened in the window, ms.
    p95_ms: float | None
    replies: int

    @property
    def failures(self) -> int:
        """Calls of the window that failed their verdict or ended in an error."""
        return self.figures.failed + sum(self.figures.errors.values())

    def to_dict(self) -> dict[str, Any]:
        f = self.figures
        return {
            "start_s": round(self.start_s, 3),
            "end_s": round(self.end_s, 3),
            "calls": f.calls,
            "success_rate": None if f.success_rate is None else round(f.success_rate, 4),
            "p95_ms": self.p95_ms,
            "replies": self.replies,
            "failed": f.failed,
            "errors": dict(f.errors),
            "failures": self.failures,
        }


@dataclass(frozen=True)
class Soak:
    duration_s: float
    window_s: float
    windows: list[Window]
    drift: Drift | None
    overall: Figures


def replies(placed: Sequence[Placed]) -> list[tuple[float, float]]:
    """Every reply as (seconds on the soak's clock, latency in ms)."""
    return sorted(
        (p.start_s + offset, latency * 1000.0)
        for p in placed
        for offset, latency in p.call.latencies
    )


def soak(calls: Sequence[Call], clock: str, slots: int, window_s: float, duration_s: float) -> Soak:
    """The soak's windows of ``window_s`` seconds over ``duration_s`` (and beyond, for
    the replies of the last calls), and its drift."""
    if window_s <= 0:
        raise ValueError("window_s must be positive")
    placed = place(calls, clock, slots)
    points = replies(placed)
    end = max([p.start_s for p in placed] + [t for t, _ in points] + [0.0])
    count = max(math.ceil(duration_s / window_s - 1e-9), int(end // window_s) + 1, 1)
    windows = []
    for i in range(count):
        lo, hi = i * window_s, (i + 1) * window_s
        started = [p.call for p in placed if lo <= p.start_s < hi]
        lat = [ms / 1000.0 for t, ms in points if lo <= t < hi]
        p95 = Percentiles.of_seconds(lat).p95
        windows.append(Window(lo, hi, figures(started), p95, len(lat)))
    return Soak(duration_s, window_s, windows, drift(points), figures(calls))
