"""The knee: the first honest step past the limits; the gate's three answers."""

from __future__ import annotations

import pytest

from vae.scorer_service.load.knee import StepPoint, find_knee, gate


def step(n: int, p95: float | None, rate: float | None = 1.0, **kw: bool) -> StepPoint:
    return StepPoint(n, p95, rate, **kw)


def test_the_knee_is_the_first_step_past_twice_the_baseline_p95() -> None:
    knee = find_knee([step(1, 800), step(2, 900), step(3, 1500), step(4, 2800), step(6, 6000)])
    assert (knee.concurrency, knee.held, knee.max_p95_ms) == (4, 3, 1600.0)
    assert knee.decided and "p95 2800 ms > 1600 ms at 4 calls" in knee.reason


def test_a_fall_of_the_success_rate_beyond_max_drop_is_a_knee_too() -> None:
    steps = [step(1, 800, 1.0), step(2, 800, 0.95), step(4, 800, 0.85)]
    assert find_knee(steps).concurrency == 4
    assert find_knee(steps, max_drop=0.2).concurrency is None
    assert find_knee(steps, max_p95_ms=700).concurrency == 2


def test_harness_limited_and_partial_steps_are_never_the_knee() -> None:
    steps = [
        step(1, 800),
        step(2, 5000, harness_limited=True),
        step(3, 9000, partial=True),
        step(4, 900),
    ]
    knee = find_knee(steps)
    assert knee.concurrency is None and knee.held == 4 and knee.decided
    assert knee.excluded == {2: "harness-limited", 3: "partial"}


def test_an_unusable_baseline_leaves_the_knee_undecided() -> None:
    for first in (step(1, 800, harness_limited=True), step(1, None, None), step(1, None)):
        knee = find_knee([first, step(2, 5000)])
        assert not knee.decided and knee.concurrency is None and "baseline" in knee.reason
    assert not find_knee([]).decided


@pytest.mark.parametrize(
    ("steps", "minimum", "code"),
    [
        ([step(1, 800), step(2, 800), step(4, 4000)], 2, 0),  # held 2 >= 2
        ([step(1, 800), step(2, 800), step(4, 4000)], 4, 1),  # degraded at 4
        ([step(1, 800), step(2, 4000)], 3, 1),  # held only 1, nothing left out between
        ([step(1, 800), step(2, 800, harness_limited=True), step(4, 4000)], 3, 3),
        ([step(1, 800), step(2, 800)], 5, 3),  # never degraded, never reached 5
        ([step(1, 800, partial=True), step(2, 800)], 1, 3),  # no baseline
        ([step(1, 800), step(8, 900)], 8, 0),
    ],
)
def test_the_gate(steps: list[StepPoint], minimum: int, code: int) -> None:
    result = gate(find_knee(steps), minimum)
    assert result.code == code, result.line
