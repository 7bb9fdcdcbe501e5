"""One clock for every session of a process: a timer per frame period, not per session.

Sessions used to run one ``asyncio.sleep`` loop each: at 100 sessions that is
6,250 timer wake-ups and task steps a second just to keep time. The
:class:`SharedTicker` keeps one ``loop.call_at`` timer per distinct period
(16 ms, 40 ms, ...). All lanes of a period sit on one grid anchored at the
ticker's epoch, so they fire together; each lane's ``tick`` is plain
synchronous code (pop a frame, record it, queue it to the bot) and never
awaits, so one firing serves every session due at that instant.

Lateness is measured per lane as the monotonic time its tick actually ran
minus its deadline, so a stall of the event loop shows in every session's
recorded statistics. A loop blocked for more than ten periods skips ahead
instead of bursting (each lane counts the ticks it skipped).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

log = logging.getLogger("vae.bridge.ticker")

#: Beyond this many periods behind, a group skips ahead instead of catching up.
MAX_CATCH_UP = 10


class Lane(Protocol):
    def tick(self, deadline_ns: int, now_ns: int) -> None:
        """Do one period's work (synchronous; must not raise)."""

    def skipped(self, ticks: int) -> None:
        """``ticks`` deadlines were skipped because the loop was blocked."""


class _Group:
    __slots__ = ("handle", "lanes", "next_ns", "period_ns")

    def __init__(self, period_ns: int, next_ns: int) -> None:
        self.period_ns = period_ns
        self.lanes: list[Lane] = []
        self.next_ns = next_ns
        self.handle: asyncio.TimerHandle | None = None


class SharedTicker:
    """Drives every registered lane of one event loop on a common period grid."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._epoch_ns = time.monotonic_ns()
        self._groups: dict[int, _Group] = {}

    @classmethod
    def for_running_loop(cls) -> SharedTicker:
        loop = asyncio.get_running_loop()
        ticker = _tickers.get(loop)
        if ticker is None:
            ticker = _tickers[loop] = cls(loop)
        return ticker

    def add(self, lane: Lane, period_ms: int) -> int:
        """Register ``lane``; return the deadline (monotonic ns) of its first tick."""
        period_ns = period_ms * 1_000_000
        group = self._groups.get(period_ns)
        if group is None:
            now = time.monotonic_ns()
            steps = -(-(now - self._epoch_ns) // period_ns)
            group = self._groups[period_ns] = _Group(period_ns, self._epoch_ns + steps * period_ns)
            self._schedule(group)
        group.lanes.append(lane)
        return group.next_ns

    def remove(self, lane: Lane) -> None:
        for period_ns, group in list(self._groups.items()):
            if lane in group.lanes:
                group.lanes.remove(lane)
                if not group.lanes:
                    if group.handle is not None:
                        group.handle.cancel()
                    del self._groups[period_ns]
        if not self._groups and _tickers.get(self._loop) is self:
            del _tickers[self._loop]

    @property
    def timers(self) -> int:
        """Timers currently armed (one per period in use)."""
        return len(self._groups)

    def _schedule(self, group: _Group) -> None:
        delay = (group.next_ns - time.monotonic_ns()) / 1e9
        group.handle = self._loop.call_later(max(0.0, delay), self._fire, group)

    def _fire(self, group: _Group) -> None:
        deadline = group.next_ns
        for lane in tuple(group.lanes):
            lane.tick(deadline, time.monotonic_ns())
        group.next_ns = deadline + group.period_ns
        lag = time.monotonic_ns() - group.next_ns
        if lag > MAX_CATCH_UP * group.period_ns:
            skip = lag // group.period_ns
            group.next_ns += skip * group.period_ns
            for lane in tuple(group.lanes):
                lane.skipped(skip)
        if self._groups.get(group.period_ns) is group:
            self._schedule(group)


#: The ticker of each loop with lanes; a ticker left without lanes drops out.
_tickers: dict[asyncio.AbstractEventLoop, SharedTicker] = {}
