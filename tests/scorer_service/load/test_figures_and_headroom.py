"""Step figures (success, percentiles, errors) and harness headroom from recorded clocks."""

from __future__ import annotations

from typing import Any

from vae.scorer_service.load.calls import Call
from vae.scorer_service.load.figures import figures
from vae.scorer_service.load.headroom import Limits, ProcessLoad, advice, headroom


def call(
    verdict: str = "passed", stop: str = "end_tool", lat: tuple[float, ...] = (), **kw: Any
) -> Call:
    return Call("s", "sc", 0, 1, 1.0, stop, stop != "cancelled", verdict,
                latencies=tuple((0.0, x) for x in lat), **kw)  # fmt: skip


def test_success_counts_decided_verdicts_and_latency_pools_every_reply() -> None:
    calls = [
        call("passed", lat=(0.5, 0.7)),
        call("failed", "inactivity_timeout", lat=(2.0,)),
        call("unscored", "cancelled"),
        call("passed", bot_errors=2, lat=(0.6,)),
        call(ttfa_s=0.2),
    ]
    f = figures(calls)
    assert (f.calls, f.passed, f.failed, f.unscored) == (5, 3, 1, 1)
    assert f.success_rate == 0.75
    assert (f.latency_ms.count, f.latency_ms.p50, f.latency_ms.p95) == (4, 600.0, 2000.0)
    assert f.ttfa_ms.p50 == 200.0
    assert f.stop_reasons == {"cancelled": 1, "end_tool": 3, "inactivity_timeout": 1}
    assert f.errors == {"bot_error_reported": 1, "cancelled": 1, "inactivity_timeout": 1}
    assert figures([]).success_rate is None and figures([]).latency_ms.p95 is None


def clock(p50: float, p99: float, skipped: int = 0, ticks: int = 400) -> dict[str, Any]:
    return {
        "tick_late": {"ticks": ticks, "p50_ms": p50, "p99_ms": p99, "max_ms": p99 * 2},
        "skipped_ticks": skipped,
        "dropped_samples": {"to_agent": 0, "to_user": 0},
    }


def test_one_pause_is_not_saturation_but_late_ticks_or_dropped_frames_are() -> None:
    limits = Limits()
    paused = [call(process="worker 1", clock=clock(0.8, 199.0)) for _ in range(3)]
    assert not headroom(paused, [], limits).harness_limited
    saturated = [call(process="worker 1", clock=clock(14.0, 60.0)) for _ in range(3)]
    room = headroom(saturated, [], limits)
    assert room.harness_limited and "worker 1: event-loop lag (median) 14.0 ms" in room.reasons[0]
    assert room.saturated == ["worker"]
    stopped = [call(process="bridge pid 7", clock=clock(0.8, 30.0, skipped=150))]
    room = headroom(stopped, [], limits)
    assert room.harness_limited and "150 frames dropped" in room.reasons[0]
    # The virtual clock waits for the harness: never harness-limited.
    assert not headroom(saturated, [], limits, virtual=True).harness_limited


def test_measured_cpu_and_own_lag_merge_with_the_sessions_figures() -> None:
    calls = [call(process="bridge pid 9", clock=clock(0.8, 5.0))]
    measured = [ProcessLoad("bridge pid 9", "bridge + callers", 0.95, 1.0, 40.0, 41.0)]
    room = headroom(calls, measured, Limits())
    (row,) = room.processes
    assert (row.role, row.cpu, row.lag_p99_ms, row.sessions) == ("bridge + callers", 0.95, 40.0, 1)
    assert room.harness_limited and "CPU 0.95 cores" in room.reasons[0]
    lines = advice([room], workers=1, cores=2, in_process=True)
    assert lines[0].startswith("add bridge workers: --workers 2")
    assert any("callers" in line for line in lines)
    assert advice([room], workers=2, cores=2, in_process=False)[0].startswith("add bridges")
    assert advice([], workers=1, cores=2, in_process=True) == []
