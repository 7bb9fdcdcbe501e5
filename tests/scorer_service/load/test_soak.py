"""A soak's clock: wall time on the real clock, each slot's session time on the virtual one."""

from __future__ import annotations

from vae.scorer_service.load.calls import Call
from vae.scorer_service.load.soak import place, soak

S = 1_000_000_000


def call(name: str, start_s: float, end_s: float, session_s: float, *lat: float) -> Call:
    return Call(
        name, "sc", int(start_s * S), int(end_s * S), session_s, "end_tool", True, "passed",
        latencies=tuple((1.0, x) for x in lat),
    )  # fmt: skip


def test_on_the_real_clock_a_call_starts_at_its_wall_time() -> None:
    calls = [call("b", 12.0, 20.0, 8.0), call("a", 10.0, 18.0, 8.0)]
    assert [(p.call.session_id, p.start_s) for p in place(calls, "real", 2)] == [
        ("a", 0.0),
        ("b", 2.0),
    ]


def test_on_the_virtual_clock_each_slot_runs_its_calls_back_to_back() -> None:
    # Two slots; wall times are short, session times long: a slot's next call starts
    # where its previous one's session time ended.
    calls = [
        call("a1", 0.0, 0.4, 7.0),
        call("b1", 0.0, 0.5, 6.0),
        call("a2", 0.4, 0.8, 7.0),
        call("b2", 0.5, 0.9, 6.0),
        call("a3", 0.8, 1.2, 7.0),
    ]
    starts = {p.call.session_id: p.start_s for p in place(calls, "virtual", 2)}
    assert starts == {"a1": 0.0, "b1": 0.0, "a2": 7.0, "b2": 6.0, "a3": 14.0}


def test_windows_hold_the_calls_that_started_and_the_replies_that_happened_in_them() -> None:
    calls = [
        call("a", 0.0, 8.0, 8.0, 0.7),
        call("b", 8.0, 16.0, 8.0, 0.9),
        call("c", 16.0, 24.0, 8.0, 1.1),
    ]
    s = soak(calls, "real", 1, 10.0, 20.0)
    assert [(w.start_s, w.end_s) for w in s.windows] == [(0.0, 10.0), (10.0, 20.0)]
    assert [w.figures.calls for w in s.windows] == [2, 1]
    # Replies at 1 s, 9 s and 17 s into the soak.
    assert [w.p95_ms for w in s.windows] == [900.0, 1100.0]
    # A call starting past the asked duration gets a window of its own.
    late = soak([*calls, call("d", 25.0, 33.0, 8.0)], "real", 1, 10.0, 20.0)
    assert [w.figures.calls for w in late.windows] == [2, 1, 1]
    assert s.overall.calls == 3 and s.drift is not None and s.drift.drift_ms_per_hour > 0
