"""The shared ticker: one timer per period for every session, deadlines kept, stalls skipped."""

from __future__ import annotations

import asyncio
import time

from vae.bridge_service.clocks.ticker import MAX_CATCH_UP, SharedTicker


class Lane:
    def __init__(self, count: int) -> None:
        self.deadlines: list[int] = []
        self.late: list[int] = []
        self.skips = 0
        self.count = count
        self.done = asyncio.Event()

    def tick(self, deadline_ns: int, now_ns: int) -> None:
        self.deadlines.append(deadline_ns)
        self.late.append(now_ns - deadline_ns)
        if len(self.deadlines) >= self.count:
            self.done.set()

    def skipped(self, ticks: int) -> None:
        self.skips += ticks


async def test_lanes_of_one_period_share_a_timer_and_its_deadlines() -> None:
    ticker = SharedTicker.for_running_loop()
    a, b, c = Lane(10), Lane(10), Lane(4)
    first = ticker.add(a, 16)
    assert ticker.add(b, 16) == first
    ticker.add(c, 40)
    assert ticker.timers == 2
    await asyncio.wait_for(asyncio.gather(a.done.wait(), b.done.wait(), c.done.wait()), 5)
    for lane in (a, b, c):
        ticker.remove(lane)
    assert ticker.timers == 0
    assert a.deadlines[:10] == b.deadlines[:10]
    assert a.deadlines[:10] == [first + i * 16_000_000 for i in range(10)]
    assert all(x >= 0 for x in a.late)
    assert {d2 - d1 for d1, d2 in zip(c.deadlines, c.deadlines[1:], strict=False)} == {40_000_000}
    # A ticker without lanes is dropped: the next one starts afresh on a new loop's terms.
    assert SharedTicker.for_running_loop() is not ticker


async def test_a_blocked_loop_skips_ahead_instead_of_bursting() -> None:
    ticker = SharedTicker.for_running_loop()
    lane = Lane(3)
    ticker.add(lane, 10)
    await asyncio.wait_for(lane.done.wait(), 5)
    time.sleep((MAX_CATCH_UP + 5) * 0.010)  # noqa: ASYNC251 - the loop is blocked on purpose
    lane.count, lane.done = len(lane.deadlines) + 3, asyncio.Event()
    await asyncio.wait_for(lane.done.wait(), 5)
    ticker.remove(lane)
    assert lane.skips >= 5
    steps = [d2 - d1 for d1, d2 in zip(lane.deadlines, lane.deadlines[1:], strict=False)]
    assert max(steps) >= 5 * 10_000_000  # one jump over the skipped deadlines
    assert len(lane.deadlines) < MAX_CATCH_UP + 10  # no burst of every missed tick
