"""The virtual clock for audio: one step per frame, the next only when both bots answered.

``RunOptions.clock`` virtual runs a session's audio as fast as its two bots
keep up instead of with wall time (docs/contract.md, "The virtual clock").
Step ``k`` is session time ``k * frame_ms``: the clock moves the session's
time there (:class:`~vae.bridge_service.timebase.VirtualTime`), takes one
frame per side from the audio path exactly as the real-time clock does
(:class:`~vae.bridge_service.clocks.open_mic.FrameLane`: the same jitter buffer,
resampler, noise and recording), sends it, and waits until each bot has
answered with ``ClockAck`` for step ``k`` — having first sent its own audio
up to the end of that step. Everything a bot sends meanwhile arrives, and is
recorded, at session time ``k * frame_ms``.

So the recording has the shape of a real-time one (the same four channels,
offsets on the sample clock, events and timings on the session's clock), and
two runs with the same seed and deterministic bots are identical sample for
sample: nothing here reads the wall clock except the bound on a bot that
stops answering — no step answered for ``inactivity_timeout_s`` of wall time
ends the session ``clock_stalled`` while its clock stands still.

The session's limits (maximum duration, inactivity, silent first speaker)
end the call on their step; the end of a call keeps stepping while
the last words drain, for at most the end grace period of session time.
The limits are checked at every step, so a call whose maximum duration is
30 s ends on the step at exactly 30 s (recorder housekeeping runs every
200 ms of session time).
"""

from __future__ import annotations

import asyncio
import time

from vae.bridge_service.audio.clock_stats import LatenessHistogram
from vae.bridge_service.clocks.open_mic import OpenMicClock
from vae.bridge_service.config import StopReason
from vae.bridge_service.session.ending import EndRequest
from vae.bridge_service.session.inputs import SessionIO
from vae.bridge_service.session.limits import check_limits
from vae.bridge_service.timebase import VirtualTime
from vae.recordings.models import Side

_NS = 1_000_000_000
_HOUSEKEEPING_NS = 200_000_000


class LockStepClock(OpenMicClock):
    """Steps a session's audio in lock-step with its two bots (see the module doc)."""

    def __init__(self, io: SessionIO) -> None:
        super().__init__(io)
        if not isinstance(io.time, VirtualTime):
            raise TypeError("the lock-step clock needs a session on the virtual clock")
        self.time: VirtualTime = io.time
        periods = {lane.period_ms for lane in self._lanes}
        if len(periods) != 1:
            raise ValueError(
                f"both sides must receive the same step on the virtual clock: {periods}"
            )
        self.step_ns = periods.pop() * 1_000_000
        self.steps = 0
        #: Wall time each step waited for the bots' answers.
        self.answer_wait = LatenessHistogram()
        self._wall_ns = 0

    def stats(self) -> dict[str, object]:
        session_s = self.time.elapsed_ns() / _NS
        wall_s = self._wall_ns / _NS
        return {
            "clock": "virtual",
            "steps": self.steps,
            "step_ms": self.step_ns / 1e6,
            "session_s": round(session_s, 3),
            "wall_s": round(wall_s, 3),
            "speed": round(session_s / wall_s, 2) if wall_s else None,
            "answer_wait": self.answer_wait.summary(),
            "dropped_samples": {
                str(lane.channel): self.io.directions[lane.side].dropped_samples
                for lane in self._lanes
            },
        }

    async def run(self) -> None:
        started = time.monotonic_ns()
        try:
            async with asyncio.TaskGroup() as tg:
                for lane in self._lanes:
                    if getattr(self.io.endpoints[lane.side], "send_nowait", None) is None:
                        tg.create_task(self._send_outbox(lane))
                await self._step_until_the_end()
                self._finished = True
                for lane in self._lanes:
                    lane.outbox_ready.set()
        finally:
            self._wall_ns = time.monotonic_ns() - started

    async def _step_until_the_end(self) -> None:
        io = self.io
        every = max(1, _HOUSEKEEPING_NS // self.step_ns)
        grace_ns = round(io.plan.bridge.end_grace_s * _NS)
        draining_until: int | None = None
        k = 0
        while True:
            self.time.advance_to(k * self.step_ns)
            now = io.time_ns()
            # A limit ends the call on its exact step, before that step's frame is played.
            check_limits(io, now)
            end = io.end_request
            if end is not None:
                if not end.graceful:
                    return
                if draining_until is None:
                    # Let the last words out: release the resampler's tail, keep stepping.
                    for direction in io.directions.values():
                        direction.flush()
                    draining_until = now + grace_ns
                elif now >= draining_until or all(d.drained() for d in io.directions.values()):
                    return
            for side in (Side.AGENT, Side.USER):
                io.step_sent[side] = k
            for lane in self._lanes:
                lane.deliver()
                if lane.failure is not None:
                    raise lane.failure
            self.steps = k + 1
            if k % every == 0:
                io.recorder.poll(now)
                await self._flush_slow()
            if not await self._answers(k):
                return
            k += 1

    async def _answers(self, k: int) -> bool:
        """Wait until every live side answered step ``k``; False when the clock must stop."""
        return await wait_for_answers(io=self.io, step=k, waits=self.answer_wait, unit="step")

    async def stop(self, task: asyncio.Task[None], *, graceful: bool) -> None:
        """The clock ends by itself once the session ends (after draining if graceful)."""
        self.io.acks_changed.set()
        await task
        self.io.delivering = False
        await self._flush_slow()


async def wait_for_answers(
    io: SessionIO, step: int, waits: LatenessHistogram, *, unit: str
) -> bool:
    """Wait until every live side answered ``step``; False when the clock must stop.

    Shared by both virtual clocks (audio here, text in ``text_clock``): the wall
    time waited goes into ``waits``; no answer for ``inactivity_timeout_s`` of
    wall time ends the session ``clock_stalled`` (``unit``: what a bot must
    answer, named in the detail).
    """
    loop = asyncio.get_running_loop()
    waited = time.monotonic_ns()
    stalled = False
    timer: asyncio.TimerHandle | None = None

    def on_stall_timer() -> None:
        nonlocal stalled
        stalled = True
        io.acks_changed.set()

    try:
        while True:
            missing = [side for side in io.live_sides() if io.acked[side] < step]
            if not missing:
                waits.add(time.monotonic_ns() - waited)
                return True
            end = io.end_request
            if end is not None and not end.graceful:
                return False
            if stalled:
                _stall(io, missing, step, unit)
                return False
            if timer is None:
                timer = loop.call_later(io.plan.settings.inactivity_timeout_s, on_stall_timer)
            io.acks_changed.clear()
            await io.acks_changed.wait()
    finally:
        if timer is not None:
            timer.cancel()


def _stall(io: SessionIO, missing: list[Side], step: int, unit: str) -> None:
    wait_s = io.plan.settings.inactivity_timeout_s
    who = " and ".join(f"the {side} bot" for side in missing)
    detail = (
        f"{who} answered no step of the virtual clock for {wait_s:g} s of wall time "
        f"(step {step}, at {io.time.elapsed_ns() / _NS:.3f} s of session time); "
        f"a bot on the virtual clock must send ClockAck for every {unit}"
    )
    io.request_end(EndRequest(StopReason.CLOCK_STALLED, detail))
