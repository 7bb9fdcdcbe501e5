"""Where a bot's brain waits for the line — and how a lock-step bot knows it is waiting.

A brain (scripted or LLM-driven) only ever waits for something the line
brings: the peer's turn, the peer starting to speak, its own utterance
starting or ending, some seconds of the session's time. Every such wait goes
through :meth:`Gate.until` with a predicate over the bot's state; whatever
changes that state (a frame heard, a chunk spoken, a text turn received, a
tick of the virtual clock) calls :meth:`Gate.poke`, which wakes the brain when
its predicate has become true.

On the real clock that is all. On the virtual clock (docs/contract.md, "The
virtual clock") a bot must answer each step only once it has done everything
the step caused, so that the same steps give the same conversation: the bot
handles the step, then :meth:`Gate.settle` — which returns once the brain is
parked again in a wait whose predicate is false (or has finished). Real work
(speech synthesis in a thread, an LLM call) is not a wait on the line: the
clock simply waits for it. :attr:`Gate.wake_at_ms` tells a text bot's
``ClockAck`` when the brain's time wait falls due.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

Predicate = Callable[[], bool]


class Gate:
    """One brain's wait on the line (a brain waits for one thing at a time)."""

    def __init__(self) -> None:
        self._predicate: Predicate | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._at_ms: int | None = None
        #: Set whenever the brain parks or finishes (what ``settle`` waits for).
        self._moved = asyncio.Event()
        self.finished = False

    @property
    def parked(self) -> bool:
        """The brain waits on the line for something that has not happened."""
        return self._waiter is not None and not self._waiter.done()

    @property
    def wake_at_ms(self) -> int | None:
        """Session time (ms) the parked brain waits for, when it waits for a time."""
        return self._at_ms if self.parked else None

    async def until(self, predicate: Predicate, *, at_ms: int | None = None) -> None:
        """Wait until ``predicate()`` holds; ``at_ms``: it is a wait for that session time."""
        while not predicate():
            waiter = asyncio.get_running_loop().create_future()
            self._predicate, self._waiter, self._at_ms = predicate, waiter, at_ms
            self._moved.set()
            try:
                await waiter
            finally:
                if self._waiter is waiter:
                    self._predicate, self._waiter, self._at_ms = None, None, None

    def poke(self) -> None:
        """The line changed: wake the brain if what it waits for has happened."""
        waiter, predicate = self._waiter, self._predicate
        if waiter is not None and not waiter.done() and predicate is not None and predicate():
            waiter.set_result(None)

    def finish(self) -> None:
        """The brain has returned (or failed): it will not park again."""
        self.finished = True
        self._moved.set()

    async def settle(self) -> None:
        """Let the brain run until it waits on the line again (or has finished)."""
        self.poke()
        while not (self.parked or self.finished):
            self._moved.clear()
            await self._moved.wait()
