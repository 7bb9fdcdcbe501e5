"""The reference agent's capacity: the base latency up to N calls, at least 4x beyond."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from vae.bots.brains.capacity import Capacity
from vae.bots.sound.listening import PeerListener

END_OF_TURN = 0.5


def test_within_capacity_the_reply_waits_the_base_latency() -> None:
    cap = Capacity(capacity=3, base_latency_s=0.3)
    for calls in (1, 2, 3):
        cap.in_progress = calls
        assert cap.reply_delay(0.15, END_OF_TURN, 0) == 0.3
    # Without a base latency of its own the script's delay stands.
    assert Capacity(capacity=3).reply_delay(0.15, END_OF_TURN, 0) == 0.15


@pytest.mark.parametrize(("calls", "extra"), [(4, 1), (5, 2), (8, 5)])
def test_beyond_capacity_a_caller_waits_over_three_times_the_base_latency_more(
    calls: int, extra: int
) -> None:
    cap = Capacity(capacity=3)
    cap.in_progress = calls
    base_latency = END_OF_TURN + 0.15  # what a caller waits when the agent is not overloaded
    waited = END_OF_TURN + cap.reply_delay(0.15, END_OF_TURN, 0)
    assert waited == pytest.approx(base_latency * (1 + 3 * extra))
    assert waited > 3 * base_latency


def test_slow_down_adds_per_call_started_before() -> None:
    cap = Capacity(slow_down_s=0.05)
    assert cap.reply_delay(0.15, END_OF_TURN, 10) == pytest.approx(0.65)


async def test_calls_count_from_their_start_until_their_brain_ends_or_is_cancelled() -> None:
    cap = Capacity(capacity=1)
    seen: list[float] = []
    release, both = asyncio.Event(), asyncio.Event()

    async def play(conv: Any, pace: Any) -> None:
        seen.append(pace(0.15))
        if len(seen) == 2:
            both.set()
        await release.wait()

    brain = cap.brain(play)
    conv = SimpleNamespace(listener=PeerListener(16000))
    first = asyncio.create_task(brain(conv))  # type: ignore[arg-type]
    second = asyncio.create_task(brain(conv))  # type: ignore[arg-type]
    await asyncio.wait_for(both.wait(), 5)
    assert cap.in_progress == 2 and cap.started == 2
    # The first call saw one call in progress (itself), the second two: one beyond capacity.
    assert seen[0] == 0.15 and seen[1] == pytest.approx(0.15 + 3 * (0.5 + 0.15))
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    assert cap.in_progress == 1
    release.set()
    await first
    assert cap.in_progress == 0
