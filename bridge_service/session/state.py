"""A session's state and its outputs: the parts one session holds, and what it sends.

:class:`SessionState` builds the per-session audio path (one
:class:`~vae.bridge_service.audio.path.Direction` each way, with its framing and
noise), the recorder, the turn counters, final-state collectors and, for
dual-sided scenarios, the state sync; it keeps the end request and which bots
are gone, and delivers to a bot (``send``, ``send_audio_nowait``, rate-limited
``notice``) and to the recording (``record``).

Why apart from :mod:`vae.bridge_service.session.inputs`: the rules for what a bot
sends (validation, sequence gaps, event routing) change with the protocol;
what a session holds and how it reaches a bot change with the audio path and
the transports. The open-mic clock (``session_clock``) uses only this part.
:class:`~vae.bridge_service.session.inputs.SessionIO` extends this class (no wrapper:
the per-frame path calls these methods and attributes directly).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from vae.bridge_service.audio.clock_stats import ArrivalGaps
from vae.bridge_service.audio.drop_log import DropLog
from vae.bridge_service.audio.framing import Framing, endpoint_framing
from vae.bridge_service.audio.line import LineTransform, session_line
from vae.bridge_service.audio.noise import NoiseSource, noise_seed
from vae.bridge_service.audio.path import Direction
from vae.bridge_service.config import TEXT
from vae.bridge_service.connectors.base import (
    BotText,
    BridgeOutput,
    NoticeOut,
    PeerAudio,
    SideEndpoint,
)
from vae.bridge_service.session.ending import EndRequest
from vae.bridge_service.session.final_state import FinalStateCollector
from vae.bridge_service.session.plan import SessionPlan
from vae.bridge_service.session.recorder import SessionRecorder
from vae.bridge_service.session.sync import StateSync
from vae.bridge_service.session.turns import TalkSpurtCounter, TextTurnCounter
from vae.bridge_service.timebase import session_time
from vae.recordings.models import Channel, EventKind, Side
from vae.recordings.write.writer import RecordingWriter

log = logging.getLogger("vae.bridge.session")

_SIDES = (Side.USER, Side.AGENT)
_NS = 1_000_000_000


class SessionState:
    def __init__(
        self, plan: SessionPlan, endpoints: dict[Side, SideEndpoint], writer: RecordingWriter
    ) -> None:
        self.plan = plan
        self.endpoints = endpoints
        s, b = plan.settings, plan.bridge
        #: The session's clock (real or virtual): every session time is read from it.
        self.time = session_time(s.clock)
        #: Unix nanos now on the session's clock (the hot path calls this).
        self.time_ns = self.time.now_ns
        self.started_ns = self.time.started_ns
        user, agent = endpoints[Side.USER], endpoints[Side.AGENT]
        self.noise_seed = noise_seed(s.seed, plan.scenario.name)
        #: A text session: text turns instead of audio (``text_turns``).
        self.text = s.modality == TEXT
        #: The phone line of the caller's audio (``bridge_service/audio/line.py``) and the
        #: noise it leaves (its white-noise level replaces the scenario's).
        line, noise = session_line(plan.scenario, s.line)
        self.line = line
        self.line_transform = (
            None
            if line is None or line.clean or self.text
            else LineTransform(line, agent.receive_rate, self.noise_seed)
        )
        self.noise_config = noise
        #: Frame length and frames per message of what each side receives. On the
        #: virtual clock a step is one message, the same for both: frames of the
        #: run's length, as many per message as the bot that asked for fewer wants.
        asked = {side: endpoint_framing(endpoints[side], s.frame_ms) for side in _SIDES}
        if self.time.virtual:
            step = Framing(s.frame_ms, min(f.frames_per_message for f in asked.values()))
            asked = {side: step for side in _SIDES}
        self.framing = asked
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
                line=self.line_transform,
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
        self.arrival_gaps = {side: ArrivalGaps() for side in _SIDES}
        self.recorder = SessionRecorder(
            writer,
            plan.session_id,
            {
                Channel.USER: user.send_rate,
                Channel.AGENT: agent.send_rate,
                Channel.TO_AGENT: agent.receive_rate,
                Channel.TO_USER: user.receive_rate,
            },
            now_ns=self.time_ns,
        )
        #: Talk spurts heard in each bot's audio (none in a text session).
        self.spurts = (
            {}
            if self.text
            else {
                side: TalkSpurtCounter(
                    endpoints[side].send_rate,
                    threshold_dbfs=b.speech_threshold_dbfs,
                    hangover_s=b.speech_hangover_s,
                    min_speech_s=b.speech_min_s,
                )
                for side in _SIDES
            }
        )
        #: Each side's turns: its talk spurts, or its text turns in a text session.
        self.counters: dict[Side, TalkSpurtCounter | TextTurnCounter] = (
            {side: TextTurnCounter() for side in _SIDES} if self.text else dict(self.spurts)
        )
        #: Text turns delivered to each side (their TextTurn.sequence).
        self.text_delivered = {side: 0 for side in _SIDES}
        #: Virtual clock: text turns received since the last step (the text clock takes them).
        self.text_inbox: list[tuple[Side, BotText]] = []
        #: Virtual clock: the step last sent to each side, the step it last answered,
        #: the session time (ms) it asked to be woken at, and a wake-up for the clock.
        self.step_sent = {side: -1 for side in _SIDES}
        self.acked = {side: -1 for side in _SIDES}
        self.wake_at_ms = {side: 0 for side in _SIDES}
        self.acks_changed = asyncio.Event()
        self.last_turn_ns = {Side.USER: 0, Side.AGENT: 0}
        self.collectors = {side: FinalStateCollector(b.max_final_state_bytes) for side in _SIDES}
        self.final_done = {side: asyncio.Event() for side in _SIDES}
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
        self.drops = DropLog(self.record, self.time_ns)

    # ------------------------------------------------------------ state
    def request_end(self, request: EndRequest) -> None:
        if self._end is None:
            self._end = request
            self._end_event.set()
            self.acks_changed.set()  # a virtual clock waiting for a step's answers looks again

    @property
    def end_request(self) -> EndRequest | None:
        """Why the session is ending (None while it goes on)."""
        return self._end

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
        noise = self.noise_config
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
            "line": self.line_info(),
        }

    def line_info(self) -> dict[str, object] | None:
        """The session's line as recorded (``sessions.line_json``, ``vae runs show``)."""
        if self.line is None:
            return None
        info: dict[str, object] = {**self.line.to_dict(), "seed": self.noise_seed}
        if self.text:
            info["not_applicable"] = "a text session has no audio for the line to degrade"
        elif self.line_transform is not None:
            info.update(self.line_transform.stats())
        return info

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
