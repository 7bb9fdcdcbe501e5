"""A session's state and its inputs: bot messages in, recorded, relayed.

:class:`SessionIO` holds the per-session audio path (one
:class:`~bridge_service.audio_path.Direction` each way), the recorder, the
turn counters, final-state collectors and, for dual-sided scenarios, the state
sync; the open-mic clock (``session_clock``) delivers what it buffers.

Bad input from one bot is refused here with a :class:`BotProtocolError` naming
the field; it ends this session with ``bot_error``, is recorded, and
never touches another session. What is merely odd (a sequence gap, malformed
JSON in an event, audio beyond the bounded buffer, a bot that stops reading)
is recorded, the bot gets a ``Notice``, and the session goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from bridge_service.audio_path import Direction
from bridge_service.clock_stats import ArrivalGaps
from bridge_service.config import StopReason
from bridge_service.connectors.base import (
    BotAudio,
    BotEvent,
    BotProtocolError,
    BridgeOutput,
    FinalStatePart,
    NoticeOut,
    PeerAudio,
    PeerEvent,
    SideEndpoint,
    StateSyncOut,
)
from bridge_service.drop_log import DropLog
from bridge_service.ending import EndRequest, end_request_for
from bridge_service.final_state import FinalStateCollector
from bridge_service.framing import endpoint_framing
from bridge_service.noise import NoiseSource, noise_seed
from bridge_service.plan import SessionPlan
from bridge_service.recorder import SessionRecorder
from bridge_service.sync import StateSync, SyncHookError
from bridge_service.turns import TalkSpurtCounter
from recordings.models import Channel, EventKind, Side
from recordings.writer import RecordingWriter

log = logging.getLogger("vae.bridge.session")

_PEER = {Side.USER: Side.AGENT, Side.AGENT: Side.USER}
_TO = {Side.AGENT: Channel.TO_AGENT, Side.USER: Channel.TO_USER}
_NS = 1_000_000_000
#: Longest stretch of input handling before the reader yields to the loop.
_TURN_NS = 2_000_000


class SessionIO:
    def __init__(
        self, plan: SessionPlan, endpoints: dict[Side, SideEndpoint], writer: RecordingWriter
    ) -> None:
        self.plan = plan
        self.endpoints = endpoints
        self.started_ns = time.time_ns()
        s, b = plan.settings, plan.bridge
        user, agent = endpoints[Side.USER], endpoints[Side.AGENT]
        noise = plan.scenario.noise
        self.noise_seed = noise_seed(s.seed, plan.scenario.name)
        #: Frame length and frames per message of what each side receives.
        self.framing = {side: endpoint_framing(endpoints[side], s.frame_ms) for side in _PEER}
        common: dict[str, Any] = {
            "jitter_buffer_ms": s.jitter_buffer_ms,
            "max_buffer_ms": b.max_buffer_ms,
            "quality": s.resample_quality,
        }
        # Keyed by the receiving side.
        self.directions = {
            Side.AGENT: Direction(
                user.send_rate,
                agent.receive_rate,
                frame_ms=self.framing[Side.AGENT].frame_ms,
                noise=None
                if noise is None
                else NoiseSource(noise, agent.receive_rate, self.noise_seed),
                **common,
            ),
            Side.USER: Direction(
                agent.send_rate,
                user.receive_rate,
                frame_ms=self.framing[Side.USER].frame_ms,
                **common,
            ),
        }
        #: Largest delay of each bot's audio beyond real time (see clock_stats).
        self.arrival_gaps = {side: ArrivalGaps() for side in _PEER}
        self.recorder = SessionRecorder(
            writer,
            plan.session_id,
            {
                Channel.USER: user.send_rate,
                Channel.AGENT: agent.send_rate,
                Channel.TO_AGENT: agent.receive_rate,
                Channel.TO_USER: user.receive_rate,
            },
        )
        self.counters = {
            side: TalkSpurtCounter(
                endpoints[side].send_rate,
                threshold_dbfs=b.speech_threshold_dbfs,
                hangover_s=b.speech_hangover_s,
                min_speech_s=b.speech_min_s,
            )
            for side in (Side.USER, Side.AGENT)
        }
        self.last_turn_ns = {Side.USER: 0, Side.AGENT: 0}
        self.collectors = {side: FinalStateCollector(b.max_final_state_bytes) for side in _PEER}
        self.final_done = {side: asyncio.Event() for side in _PEER}
        self.sync = StateSync(plan.scenario) if plan.scenario.dual_sided else None
        self._next_seq: dict[Side, int] = {Side.USER: 0, Side.AGENT: 0}
        self._gone: set[Side] = set()
        self._closed: set[Side] = set()
        self._end: EndRequest | None = None
        self._end_event = asyncio.Event()
        #: False once the clock stopped: later audio is recorded, not delivered.
        self.delivering = True
        self._notice_ns: dict[tuple[Side, str], int] = {}
        #: Drops and gaps, one event per side, cause and second.
        self.drops = DropLog(self.record)

    # ------------------------------------------------------------ state
    def request_end(self, request: EndRequest) -> None:
        if self._end is None:
            self._end = request
            self._end_event.set()

    async def wait_end(self) -> EndRequest:
        await self._end_event.wait()
        assert self._end is not None
        return self._end

    @property
    def ended(self) -> bool:
        return self._end is not None

    def is_gone(self, side: Side) -> bool:
        return side in self._gone

    def live_sides(self) -> list[Side]:
        return [s for s in (Side.USER, Side.AGENT) if s not in self._gone]

    def turns(self) -> dict[Side, int]:
        return {side: c.turns for side, c in self.counters.items()}

    def last_turn_side(self) -> Side | None:
        user, agent = self.last_turn_ns[Side.USER], self.last_turn_ns[Side.AGENT]
        if not user and not agent:
            return None
        return Side.USER if user > agent else Side.AGENT

    def audio_info(self) -> dict[str, object]:
        s = self.plan.settings
        noise = self.plan.scenario.noise
        return {
            "frame_ms": s.frame_ms,
            "frames_to": {
                str(side): {"frame_ms": f.frame_ms, "frames_per_message": f.frames_per_message}
                for side, f in self.framing.items()
            },
            "jitter_buffer_ms": s.jitter_buffer_ms,
            "encoding": "pcm16le",
            "rates": {
                "user": self.endpoints[Side.USER].send_rate,
                "agent": self.endpoints[Side.AGENT].send_rate,
                "to_agent": self.endpoints[Side.AGENT].receive_rate,
                "to_user": self.endpoints[Side.USER].receive_rate,
            },
            "resampler": {
                "library": "soxr",
                "quality": s.resample_quality,
                "to_agent_delay_s": self.directions[Side.AGENT].resampler_delay_s,
                "to_user_delay_s": self.directions[Side.USER].resampler_delay_s,
            },
            "noise": None
            if noise is None
            else {
                "white_noise_db": noise.white_noise_db,
                "noise_files": noise.noise_files,
                "gain_db": noise.gain_db,
                "random_offset": noise.random_offset,
                "seed": self.noise_seed,
            },
        }

    # ------------------------------------------------------------ output
    async def send(self, side: Side, message: BridgeOutput) -> bool:
        if side in self._closed:
            return False
        try:
            return await self.endpoints[side].send(message)
        except Exception as exc:  # a broken transport is the reader's business
            log.debug("send to %s failed: %s", side, exc)
            return False

    def send_audio_nowait(self, side: Side, frame: PeerAudio) -> bool | None:
        """Queue a frame to a bot without awaiting; None when its endpoint cannot."""
        if side in self._closed:
            return False
        send = getattr(self.endpoints[side], "send_nowait", None)
        if send is None:
            return None
        return bool(send(frame))

    async def record(
        self, side: Side, kind: EventKind, payload: dict[str, Any], bot_ns: int = 0
    ) -> None:
        await self.recorder.event(side, kind, payload, bot_ns=bot_ns)

    async def notice(self, side: Side, code: str, message: str) -> None:
        """Tell a bot something, at most once a second per kind."""
        now = time.monotonic_ns()
        if now - self._notice_ns.get((side, code), -_NS) < _NS:
            return
        self._notice_ns[(side, code)] = now
        await self.send(side, NoticeOut(code, message))

    async def close_all(self) -> None:
        for side, endpoint in self.endpoints.items():
            if side not in self._closed:
                self._closed.add(side)
                with contextlib.suppress(Exception):
                    await endpoint.close(None)

    # ------------------------------------------------------------ input
    async def read(self, side: Side) -> None:
        endpoint = self.endpoints[side]
        turn_start = last_done = 0
        try:
            async for message in endpoint.receive():
                now = time.monotonic_ns()
                if now - last_done > _TURN_NS // 8:
                    turn_start = now  # we waited for this message: a fresh turn
                elif now - turn_start > _TURN_NS:
                    # A backlog of queued input (a flooding bot) is handled without
                    # suspending; give the loop back so no clock waits behind it.
                    await asyncio.sleep(0)
                    turn_start = time.monotonic_ns()
                if isinstance(message, BotAudio):
                    await self._on_audio(side, message)
                elif isinstance(message, BotEvent):
                    await self._on_event(side, message)
                elif isinstance(message, FinalStatePart) and await self.collectors[side].add(
                    message
                ):
                    self.final_done[side].set()
                last_done = time.monotonic_ns()
        except BotProtocolError as exc:
            await self._fail(side, exc)
            return
        except Exception as exc:
            log.warning("%s bot stream failed: %s", side, exc)
            if self._end is None:
                await self.record(side, EventKind.SESSION_ERROR, {"error": str(exc)})
        self.final_done[side].set()
        if self._end is None:
            self._gone.add(side)
            self.request_end(
                EndRequest(StopReason.BOT_DISCONNECTED, f"the {side} bot left mid-call")
            )

    async def _fail(self, side: Side, exc: BotProtocolError) -> None:
        await self.record(side, EventKind.SESSION_ERROR, {"field": exc.field, "error": str(exc)})
        if exc.field.startswith("max_final_state"):
            # Over a final-state limit: keep none of it rather than a cut document.
            self.collectors[side] = FinalStateCollector(self.plan.bridge.max_final_state_bytes)
        self._gone.add(side)
        self._closed.add(side)
        self.final_done[side].set()
        with contextlib.suppress(Exception):
            await self.endpoints[side].close(exc)
        self.request_end(EndRequest(StopReason.BOT_ERROR, f"the {side} bot sent bad input: {exc}"))

    async def _on_audio(self, side: Side, chunk: BotAudio) -> None:
        size = len(chunk.pcm)
        if size % 2:
            raise BotProtocolError("audio.pcm", f"odd byte count {size}: PCM16 needs whole samples")
        if size > self.plan.bridge.max_chunk_bytes:
            raise BotProtocolError(
                "audio.pcm",
                f"{size} bytes exceeds the {self.plan.bridge.max_chunk_bytes}-byte chunk limit",
            )
        now = time.time_ns()
        self.arrival_gaps[side].add(now, size // 2, self.endpoints[side].send_rate)
        expected = self._next_seq[side]
        if chunk.sequence != expected:
            # Backwards sequences never get here (protocol_state refuses them).
            message = f"expected sequence {expected}, got {chunk.sequence}"
            if await self.drops.add(
                side,
                EventKind.SEQUENCE_GAP,
                "sequence_gap",
                sequence=chunk.sequence,
                samples=0,
                span=(expected, chunk.sequence),
                message=message,
            ):
                await self.notice(side, "sequence_gap", message)
        self._next_seq[side] = chunk.sequence + 1
        channel = Channel.USER if side is Side.USER else Channel.AGENT
        await self.recorder.audio(channel, chunk.pcm, chunk.sample_offset, chunk.sequence, now)
        if self.counters[side].add(chunk.pcm, now):
            self.last_turn_ns[side] = now
        if not self.delivering or not size:
            return
        dropped = self.directions[_PEER[side]].push(chunk.pcm)
        if dropped and await self.drops.add(
            side,
            EventKind.AUDIO_DROPPED,
            "sender_faster_than_real_time",
            sequence=chunk.sequence,
            samples=dropped,
            span=(chunk.sample_offset, chunk.sample_offset + size // 2),
            direction=str(_TO[_PEER[side]]),
        ):
            await self.notice(
                side,
                "audio_dropped",
                "audio beyond the bounded buffer was dropped: send in real time",
            )

    async def _on_event(self, side: Side, event: BotEvent) -> None:
        if event.problem:
            payload = {"problem": event.problem, "kind": str(event.kind), "event": event.payload}
            await self.record(side, EventKind.MALFORMED_EVENT, payload, event.bot_ns)
            await self.notice(side, "malformed_event", event.problem)
            return
        await self.record(side, event.kind, event.payload, event.bot_ns)
        peer = _PEER[side]
        if event.kind is EventKind.TRANSCRIPT and self.plan.settings.share_transcripts:
            await self.send(peer, PeerEvent(event.bot_ns, event.payload))
        elif event.kind is EventKind.TOOL_CALL and event.payload.get("is_write") and self.sync:
            await self._sync(side, event.payload)
        elif event.kind is EventKind.END_CONVERSATION:
            kind, reason = str(event.payload.get("kind", "")), str(event.payload.get("reason", ""))
            self.request_end(end_request_for(side, kind, reason))

    async def _sync(self, side: Side, action: dict[str, Any]) -> None:
        assert self.sync is not None
        try:
            deltas = self.sync.on_write(action)
        except SyncHookError as exc:
            await self.record(Side.BRIDGE, EventKind.SESSION_ERROR, {"error": str(exc)})
            return
        call_id = str(action.get("call_id", ""))
        for d in deltas:
            payload = {
                "to": str(d.side),
                "sequence": d.sequence,
                "delta": d.delta,
                "cause_call_id": call_id,
                "cause_side": str(side),
            }
            await self.record(Side.BRIDGE, EventKind.STATE_SYNC, payload)
            await self.send(d.side, StateSyncOut(d.sequence, d.delta, call_id, side))
