"""The open-mic clock of one session (DESIGN.md §3).

Every ``frame_ms`` the clock takes one frame per direction from the session's
:class:`~bridge_service.audio_path.Direction` (the peer's buffered audio, or
silence), records it on the ``to_agent``/``to_user`` channel with the tick
time, and hands it to the receiving bot. Ticks follow absolute deadlines on
the monotonic clock, so they never drift; a loop blocked for more than ten
frames skips ahead instead of bursting (counted in ``skipped_ticks``).

The clock also checks the session's limits (max duration, inactivity), polls
the recorder so quiet channels are durable within a second, and records
frames dropped towards a bot that stopped reading (at most once a second,
with the count, never silently).
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from bridge_service.config import StopReason
from bridge_service.connectors.base import PeerAudio
from bridge_service.ending import EndRequest
from bridge_service.first_speaker import silent_first_speaker
from bridge_service.session_io import SessionIO
from recordings.models import Channel, EventKind, Side

_TO = {Side.AGENT: Channel.TO_AGENT, Side.USER: Channel.TO_USER}
_NS = 1_000_000_000


class OpenMicClock:
    def __init__(self, io: SessionIO) -> None:
        self.io = io
        self._stop = False
        self._draining = False
        self._slow = {Side.USER: 0, Side.AGENT: 0}
        #: Ticks skipped because the event loop was too busy to keep time.
        self.skipped_ticks = 0

    async def run(self) -> None:
        """Deliver one frame per direction every frame_ms, drift-compensated."""
        io = self.io
        frame_ns = io.plan.settings.frame_ms * 1_000_000
        poll_every = max(1, 100 // io.plan.settings.frame_ms)
        t_next = time.monotonic_ns()
        seq = 0
        while not self._stop:
            delay = t_next - time.monotonic_ns()
            if delay > 0:
                await asyncio.sleep(delay / 1e9)
            now = time.time_ns()
            await self._tick(seq, now)
            seq += 1
            t_next += frame_ns
            lag = time.monotonic_ns() - t_next
            if lag > 10 * frame_ns:
                skip = lag // frame_ns
                self.skipped_ticks += skip
                t_next += skip * frame_ns
            if seq % poll_every == 0:
                await io.recorder.poll(now)
                await self._flush_slow()
            self._check_limits(now)
            if self._draining and all(d.drained() for d in io.directions.values()):
                return

    async def _tick(self, seq: int, now: int) -> None:
        io = self.io
        for side, direction in io.directions.items():
            frame, _ = direction.pop_frame()
            offset = seq * direction.frame_samples
            await io.recorder.audio(_TO[side], frame, offset, seq, now)
            if io.is_gone(side):
                continue
            if not await io.send(side, PeerAudio(seq, offset, frame, now)):
                self._slow[side] += 1

    async def _flush_slow(self) -> None:
        for side, frames in self._slow.items():
            if frames:
                self._slow[side] = 0
                payload = {"reason": "slow_reader", "frames": frames, "direction": str(_TO[side])}
                await self.io.record(side, EventKind.AUDIO_DROPPED, payload)
                await self.io.notice(side, "slow_reader", f"{frames} frames to you were dropped")

    def _check_limits(self, now: int) -> None:
        io = self.io
        if io.ended:
            return
        if now - io.started_ns >= io.plan.max_duration_s * _NS:
            detail = f"reached the maximum duration of {io.plan.max_duration_s:g} s"
            io.request_end(EndRequest(StopReason.MAX_DURATION, detail))
            return
        silent = silent_first_speaker(io.plan, io.started_ns, now, io.turns())
        if silent is not None:
            io.request_end(silent)
            return
        last = max(io.started_ns, *(c.last_voiced_ns for c in io.counters.values()))
        timeout = io.plan.settings.inactivity_timeout_s
        if now - last >= timeout * _NS:
            detail = f"no speech on either side for {timeout:g} s"
            io.request_end(EndRequest(StopReason.INACTIVITY_TIMEOUT, detail))

    async def stop(self, task: asyncio.Task[None], *, graceful: bool) -> None:
        """Stop delivering; after a bot's EndConversation, first let the last words out."""
        if graceful:
            for direction in self.io.directions.values():
                direction.flush()
            self._draining = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), self.io.plan.bridge.end_grace_s)
        self._stop = True
        await task
        self.io.delivering = False
        await self._flush_slow()
