"""The clock of a text session, real or virtual.

A text session has no audio to tick, so its clock only keeps time for the
session's limits and, on the virtual clock, decides when each turn reaches
the peer (docs/contract.md, "Text turns" and "The virtual clock").

- :class:`RealTextClock`: turns are recorded and delivered as they arrive
  (:mod:`vae.bridge_service.session.inputs`); this clock checks the limits five times
  a second of wall time.
- :class:`VirtualTextClock`: a discrete-event clock. At each step it sends
  both bots a ``ClockTick`` with the session time and waits for both
  ``ClockAck``\\ s (each bot first sends its turns and events for that
  moment). Each new turn then starts when its sender's previous turn ended
  (at the earliest at the step's time), lasts its speaking time
  (:func:`~vae.bridge_service.session.text_turns.duration_ns`) and reaches the peer at
  its end. The next step is the earliest of: a turn reaching a bot, a time a
  bot asked to be woken at (``wake_at_ms``), a limit falling due. So a
  stalled call ends on its inactivity timeout at once in wall time, exactly
  at its time on the session's clock. Turns of one step are taken user
  first, then agent, each in the order it sent them: the same bots give the
  same session, step for step.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from vae.bridge_service.audio.clock_stats import LatenessHistogram
from vae.bridge_service.clocks.lockstep import wait_for_answers
from vae.bridge_service.connectors.base import ClockTickOut
from vae.bridge_service.session.ending import EndRequest
from vae.bridge_service.session.inputs import SessionIO
from vae.bridge_service.session.limits import check_limits, next_deadline_ns
from vae.bridge_service.session.text_turns import deliver, duration_ns, record_turn
from vae.bridge_service.timebase import VirtualTime
from vae.recordings.models import Side

_NS = 1_000_000_000
_MS = 1_000_000
_HOUSEKEEPING_S = 0.2
_SIDES = (Side.USER, Side.AGENT)


class RealTextClock:
    """Text on the real clock: only the limits, checked on wall time."""

    def __init__(self, io: SessionIO) -> None:
        self.io = io
        self._stop = asyncio.Event()

    def stats(self) -> dict[str, object]:
        return {"clock": "real", "modality": "text"}

    async def run(self) -> None:
        io = self.io
        loop = asyncio.get_running_loop()
        while not self._stop.is_set():
            # A plain timer (no task per wake-up); request_end also wakes it.
            timer = loop.call_later(_HOUSEKEEPING_S, io.acks_changed.set)
            await io.acks_changed.wait()
            io.acks_changed.clear()
            timer.cancel()
            check_limits(io, io.time_ns())
            if io.ended:
                return

    async def stop(self, task: asyncio.Task[None], *, graceful: bool) -> None:
        """Turns were delivered as they came: nothing is left to drain."""
        self._stop.set()
        self.io.acks_changed.set()
        await task
        self.io.delivering = False


@dataclass(order=True)
class _Pending:
    at_ns: int
    order: int
    sender: Side
    text: str


class VirtualTextClock:
    """Text on the virtual clock: a step per event, turns timed by their speaking time."""

    def __init__(self, io: SessionIO) -> None:
        if not isinstance(io.time, VirtualTime):
            raise TypeError("the virtual text clock needs a session on the virtual clock")
        self.io = io
        self.time: VirtualTime = io.time
        self.steps = 0
        self.answer_wait = LatenessHistogram()
        self._pending: list[_Pending] = []
        self._order = 0
        self._line_free = {side: 0 for side in _SIDES}
        self._wall_ns = 0

    def stats(self) -> dict[str, object]:
        session_s = self.time.elapsed_ns() / _NS
        wall_s = self._wall_ns / _NS
        return {
            "clock": "virtual",
            "modality": "text",
            "steps": self.steps,
            "session_s": round(session_s, 3),
            "wall_s": round(wall_s, 3),
            "speed": round(session_s / wall_s, 2) if wall_s else None,
            "answer_wait": self.answer_wait.summary(),
        }

    async def run(self) -> None:
        started = time.monotonic_ns()
        try:
            await self._steps()
        finally:
            self._wall_ns = time.monotonic_ns() - started

    async def _steps(self) -> None:
        io = self.io
        t = 0
        step = 0
        while True:
            self.time.advance_to(t)
            now = io.time_ns()
            await self._deliver_due(now)
            check_limits(io, now)
            end = io.end_request
            if end is not None:
                await self._last_words(now, end)
                return
            for side in io.live_sides():
                io.step_sent[side] = step
                await io.send(side, ClockTickOut(step, t // _MS))
            self.steps = step + 1
            answered = await self._answers(step)
            await self._take_turns(now)  # what was said before an end is kept, in order
            if not answered:
                return
            end = io.end_request
            if end is not None:
                await self._last_words(now, end)
                return
            t = self._next_step_ns(t)
            step += 1

    async def _answers(self, step: int) -> bool:
        return await wait_for_answers(
            io=self.io, step=step, waits=self.answer_wait, unit="ClockTick"
        )

    async def _take_turns(self, now_ns: int) -> None:
        """Record this step's turns, user first, and schedule each to reach the peer."""
        io = self.io
        inbox, io.text_inbox = io.text_inbox, []
        for side in _SIDES:
            for sender, turn in inbox:
                if sender is not side:
                    continue
                start = max(now_ns, self._line_free[side])
                end = start + duration_ns(turn)
                self._line_free[side] = end
                await record_turn(io, side, turn, start, end)
                self._order += 1
                self._pending.append(_Pending(end, self._order, side, turn.text))
        self._pending.sort()

    async def _deliver_due(self, now_ns: int) -> None:
        while self._pending and self._pending[0].at_ns <= now_ns:
            due = self._pending.pop(0)
            await deliver(self.io, due.sender, due.text, due.at_ns)

    def _next_step_ns(self, t: int) -> int:
        """Session time (ns since the start) of the next step: the first thing due after ``t``."""
        io = self.io
        due = [next_deadline_ns(io) - io.started_ns]
        if self._pending:
            due.append(self._pending[0].at_ns - io.started_ns)
        for side in io.live_sides():
            wake = io.wake_at_ms[side] * _MS
            if wake > t:
                due.append(wake)
        return max(t + 1, min(due))

    async def _last_words(self, now_ns: int, end: EndRequest) -> None:
        """On a bot's end: turns still being "spoken" reach the peer within the grace period."""
        if not end.graceful or not self._pending:
            return
        io = self.io
        until = now_ns + round(io.plan.bridge.end_grace_s * _NS)
        last = min(max(p.at_ns for p in self._pending), until)
        self.time.advance_to(last - io.started_ns)
        for due in self._pending:
            await deliver(io, due.sender, due.text, min(due.at_ns, last))
        self._pending = []

    async def stop(self, task: asyncio.Task[None], *, graceful: bool) -> None:
        """The clock ends by itself once the session ends (after the last words)."""
        self.io.acks_changed.set()
        await task
        self.io.delivering = False
