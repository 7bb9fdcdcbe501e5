"""The open-mic clock of one session, driven by the process's shared ticker.

Each receiving side is a :class:`FrameLane` on the
:class:`~vae.bridge_service.clocks.ticker.SharedTicker`: every ``frame_ms *
frames_per_message`` it takes that many frames from the session's
:class:`~vae.bridge_service.audio.path.Direction` (the peer's buffered audio, or
silence), records them on the ``to_agent``/``to_user`` channel with the tick
time, and queues them to the bot as one message. The tick is synchronous: it
never awaits the writer (``*_nowait``) or the bot's transport (an endpoint
with ``send_nowait``; others get a small sender task), so a busy session or
a slow disk cannot hold up the other sessions sharing the timer.

Each lane records how late its ticks ran (:mod:`vae.bridge_service.audio.clock_stats`),
kept with the session so a stall shows in the data. A housekeeping loop, five
times a second, checks the session's limits (max duration, inactivity),
closes segments of quiet channels so they are durable within a second, and
records frames dropped towards a bot that stopped reading (at most once a
second, with the count, never silently).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib

from vae.bridge_service.audio.clock_stats import LatenessHistogram
from vae.bridge_service.clocks.ticker import SharedTicker
from vae.bridge_service.connectors.base import PeerAudio
from vae.bridge_service.session.inputs import SessionIO
from vae.bridge_service.session.limits import check_limits
from vae.recordings.models import Channel, EventKind, Side

_TO = {Side.AGENT: Channel.TO_AGENT, Side.USER: Channel.TO_USER}
_NS = 1_000_000_000
_HOUSEKEEPING_S = 0.2


class FrameLane:
    """One direction of one session on the shared ticker."""

    def __init__(
        self, io: SessionIO, side: Side, lateness: LatenessHistogram, wake: asyncio.Event
    ) -> None:
        self.io = io
        self.wake = wake
        #: Set by the clock once the session ends gracefully: wake it when drained.
        self.draining = False
        self.side = side
        self.channel = _TO[side]
        self.direction = io.directions[side]
        self.frames = io.framing[side].frames_per_message
        self.period_ms = io.framing[side].frame_ms * self.frames
        self.samples = self.direction.frame_samples * self.frames
        self.lateness = lateness
        self.sequence = 0
        self.slow = 0
        self.skipped_ticks = 0
        #: Frames for an endpoint without ``send_nowait`` (sent by the clock's task).
        self.outbox: collections.deque[PeerAudio] = collections.deque()
        self.outbox_ready = asyncio.Event()
        self.failure: BaseException | None = None

    def tick(self, deadline_ns: int, now_ns: int) -> None:
        self.lateness.add(now_ns - deadline_ns)
        try:
            self.deliver()
        except Exception as exc:  # reported by the clock's task, never to the ticker
            self.failure = exc

    def deliver(self) -> None:
        io = self.io
        wall = io.time_ns()
        frame = self.direction.pop_frames(self.frames)
        offset = self.sequence * self.samples
        message = PeerAudio(self.sequence, offset, frame, wall)
        sequence = self.sequence
        self.sequence += 1
        if self.draining and self.direction.drained():
            self.wake.set()
        # The delivered channel records what was delivered: a frame to a bot
        # that left, or one dropped for a slow reader, leaves a gap.
        if io.is_gone(self.side):
            return
        sent = io.send_audio_nowait(self.side, message)
        if sent is None:
            if len(self.outbox) >= io.plan.bridge.max_outgoing_frames:
                sent = False
            else:
                self.outbox.append(message)
                self.outbox_ready.set()
                sent = True
        if not sent:
            self.slow += self.frames
            return
        io.recorder.audio_nowait(self.channel, frame, offset, sequence, wall)

    def skipped(self, ticks: int) -> None:
        self.skipped_ticks += ticks


class OpenMicClock:
    def __init__(self, io: SessionIO, ticker: SharedTicker | None = None) -> None:
        self.io = io
        self._ticker = ticker
        self._stop = asyncio.Event()
        self._wake = asyncio.Event()
        self._draining = False
        self._finished = False
        #: Tick lateness of both lanes of this session.
        self.lateness = LatenessHistogram()
        self._lanes = [
            FrameLane(io, side, self.lateness, self._wake) for side in (Side.AGENT, Side.USER)
        ]

    @property
    def skipped_ticks(self) -> int:
        """Ticks skipped because the event loop was too busy to keep time."""
        return sum(lane.skipped_ticks for lane in self._lanes)

    def stats(self) -> dict[str, object]:
        """What the session records about its clock (``sessions.clock_json``)."""
        io = self.io
        return {
            "tick_late": self.lateness.summary(),
            "skipped_ticks": self.skipped_ticks,
            "arrival_gap_max_ms": {
                str(side): round(gaps.max_ns / 1e6, 3) for side, gaps in io.arrival_gaps.items()
            },
            "dropped_samples": {
                str(_TO[side]): d.dropped_samples for side, d in io.directions.items()
            },
        }

    async def run(self) -> None:
        """Deliver frames on the shared ticker until stopped; keep house meanwhile."""
        ticker = self._ticker or SharedTicker.for_running_loop()
        for lane in self._lanes:
            ticker.add(lane, lane.period_ms)
        try:
            async with asyncio.TaskGroup() as tg:
                for lane in self._lanes:
                    if getattr(self.io.endpoints[lane.side], "send_nowait", None) is None:
                        tg.create_task(self._send_outbox(lane))
                await self._housekeeping()
                self._finished = True
                for lane in self._lanes:
                    lane.outbox_ready.set()
        finally:
            for lane in self._lanes:
                ticker.remove(lane)

    async def _housekeeping(self) -> None:
        io = self.io
        last_flush = 0
        loop = asyncio.get_running_loop()
        while not self._stop.is_set():
            # A plain timer, not wait_for: no task per wake-up, for every session.
            timer = loop.call_later(_HOUSEKEEPING_S, self._wake.set)
            await self._wake.wait()
            timer.cancel()
            self._wake.clear()
            for lane in self._lanes:
                if lane.failure is not None:
                    raise lane.failure
            now = io.time_ns()
            io.recorder.poll(now)
            if now - last_flush >= _NS:
                last_flush = now
                await self._flush_slow()
            check_limits(io, now)
            if self._draining and all(d.drained() for d in io.directions.values()):
                return

    async def _send_outbox(self, lane: FrameLane) -> None:
        """Send queued frames to an endpoint that only has an async ``send``."""
        while not self._finished or lane.outbox:
            if not lane.outbox:
                lane.outbox_ready.clear()
                await lane.outbox_ready.wait()
                continue
            if not await self.io.send(lane.side, lane.outbox.popleft()):
                lane.slow += lane.frames

    async def _flush_slow(self) -> None:
        for lane in self._lanes:
            if lane.slow:
                frames, lane.slow = lane.slow, 0
                payload = {
                    "reason": "slow_reader",
                    "frames": frames,
                    "direction": str(lane.channel),
                }
                await self.io.record(lane.side, EventKind.AUDIO_DROPPED, payload)
                await self.io.notice(
                    lane.side, "slow_reader", f"{frames} frames to you were dropped"
                )

    async def stop(self, task: asyncio.Task[None], *, graceful: bool) -> None:
        """Stop delivering; after a bot's EndConversation, first let the last words out."""
        if graceful:
            for direction in self.io.directions.values():
                direction.flush()
            self._draining = True
            for lane in self._lanes:
                lane.draining = True
            self._wake.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), self.io.plan.bridge.end_grace_s)
        self._stop.set()
        self._wake.set()
        await task
        self.io.delivering = False
        await self._flush_slow()
