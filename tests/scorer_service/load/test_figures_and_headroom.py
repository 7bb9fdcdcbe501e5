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
        call("passed", agent_errors=2, lat=(0.6,)),
        call("passed", caller_errors=("user: no complete final state within 10 s",)),
        call(ttfa_s=0.2),
    ]
    f = figures(calls)
    assert (f.calls, f.passed, f.failed, f.unscored) == (6, 4, 1, 1)
    assert f.success_rate == 0.8
    assert (f.latency_ms.count, f.latency_ms.p50, f.latency_ms.p95) == (4, 600.0, 2000.0)
    assert f.ttfa_ms.p50 == 200.0
    assert f.stop_reasons == {"cancelled": 1, "end_tool": 4, "inactivity_timeout": 1}
    assert f.errors == {
        "agent_error_reported": 1,
        "caller_error_reported": 1,
        "cancelled": 1,
        "inactivity_timeout": 1,
    }
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
    assert advice([room], workers=2, cores=2, in_process=True)[0].startswith("add bridges")
    assert "vae bridge serve --workers auto" in advice([room], 0, 2, in_process=False)[0]
    assert advice([], workers=1, cores=2, in_process=True) == []


def test_a_caller_that_reported_errors_makes_the_step_harness_limited() -> None:
    late = ("user: no complete final state within 10 s",)
    calls = [call(clock=clock(0.8, 5.0)), call(clock=clock(0.8, 5.0), caller_errors=late)]
    room = headroom(calls, [], Limits())
    assert room.harness_limited and room.saturated == ["callers"]
    assert room.reasons == [
        "the callers reported errors in 1 calls (first: user: no complete final state within 10 s)"
    ]
    # An agent's own errors are the agent's: counted as errors, never the harness's.
    assert not headroom([call(agent_errors=3, clock=clock(0.8, 5.0))], [], Limits()).harness_limited
    assert any("callers" in line for line in advice([room], 1, 2, in_process=True))
