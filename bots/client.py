"""One Converse stream: Join, wait for a session, play it, answer FinalState.

The stream is driven by up to three tasks in one TaskGroup — the reader (peer
audio or text turns to the listener, peer transcripts, state syncs, clock
steps, the ending), the voice (paced audio out, on the real clock only) and
the brain. Outgoing messages go through one queue feeding the request
iterator, so the tasks never write to the stream concurrently. On
SessionEnding the brain is cancelled wherever it is, the voice closed, and the
final state sent in chunks.

The reference bots declare at Join that they take text sessions and follow
the virtual clock (docs/contract.md). What a session's modality and clock
change — how a frame, a text turn or a tick is played, and the answers to
the virtual clock's steps — is :class:`vae.bots.line.Line`.
Given a way to reach a worker (``redirect_to``), the stream says at Join that
it follows redirects: a bridge started with ``--workers N`` may then answer
``Redirect`` instead of ``SessionStart``, and the bot opens a new stream at
the worker's port on the host it dialled, joining with the ticket
(docs/contract.md, "Redirects"). A worker never redirects again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from vae.bots.brains.conversation import Conversation, SessionInfo
from vae.bots.brains.gate import Gate
from vae.bots.line import Line
from vae.bots.sound.listening import ListenSettings, PeerListener, PeerTexts
from vae.bots.sound.speech import Synthesiser
from vae.bots.sound.voice import Voice
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.common.v1 import common_pb2

log = logging.getLogger("vae.bots.client")

Brain = Callable[[Conversation], Awaitable[None]]
#: A stub for the worker at this port, on the host the bot dialled.
RedirectTo = Callable[[int], "bridge_pb2_grpc.BridgeServiceAsyncStub"]
JSON_CHUNK = 256 * 1024
_FIRST = {common_pb2.ROLE_USER: "user", common_pb2.ROLE_AGENT: "agent"}
_MODALITY = {common_pb2.MODALITY_TEXT: "text"}
_CLOCK = {common_pb2.CLOCK_KIND_VIRTUAL: "virtual"}
RECEIVE_RATE = 16000
FRAMES_PER_MESSAGE = 2


@dataclass
class SessionOutcome:
    session_id: str
    scenario_name: str
    stop_reason: str
    clean_exit: bool
    final_state: dict[str, Any]


def session_info(start: bridge_pb2.SessionStart) -> SessionInfo:
    def obj(text: str, default: Any) -> Any:
        return json.loads(text) if text else default

    return SessionInfo(
        session_id=start.session.session_id,
        run_id=start.session.run_id,
        scenario_name=start.session.scenario_name,
        role="user" if start.role == common_pb2.ROLE_USER else "agent",
        domain=start.domain,
        system_prompt=start.system_prompt,
        tools=obj(start.tools_json, {}),
        initial_state=obj(start.initial_state_json, {}),
        initialization_actions=obj(start.initialization_actions_json, []),
        side_config=obj(start.side_config_json, {}),
        max_duration_ms=start.max_duration_ms,
        share_transcripts=start.share_transcripts,
        receive_rate=start.receive_format.sample_rate_hz or RECEIVE_RATE,
        first_speaker=_FIRST.get(start.first_speaker, ""),
        modality=_MODALITY.get(start.modality, "audio"),
        clock=_CLOCK.get(start.clock, "real"),
        frame_ms=start.frame_ms or 16,
        seed=start.seed,
        tool_backend={
            "http_url": start.tool_backend.http_url,
            "openapi_url": start.tool_backend.openapi_url,
            "mcp_url": start.tool_backend.mcp_url,
        }
        if start.HasField("tool_backend")
        else {},
    )


def json_chunks(doc: Any) -> list[common_pb2.JsonChunk]:
    data = json.dumps(doc, ensure_ascii=False, default=str).encode()
    pieces = [data[i : i + JSON_CHUNK] for i in range(0, len(data), JSON_CHUNK)] or [b""]
    return [
        common_pb2.JsonChunk(offset=i * JSON_CHUNK, data=p, last=i == len(pieces) - 1)
        for i, p in enumerate(pieces)
    ]


def final_state_messages(state: Any, context: Any) -> list[bridge_pb2.BotMessage]:
    """The FinalState messages: state chunks, then context chunks, the last done."""
    msgs = [bridge_pb2.FinalState(state=c) for c in json_chunks(state)]
    msgs += [bridge_pb2.FinalState(context=c) for c in json_chunks(context)]
    msgs[-1].done = True
    return [bridge_pb2.BotMessage(final_state=m) for m in msgs]


async def _read(call: Any) -> bridge_pb2.BridgeMessage | None:
    msg = await call.read()
    return msg if isinstance(msg, bridge_pb2.BridgeMessage) else None  # EOF


class BotStream:
    """One bot in (at most) one session over one Converse stream."""

    def __init__(
        self,
        stub: bridge_pb2_grpc.BridgeServiceAsyncStub,
        role: str,
        brain: Brain,
        synth: Synthesiser,
        *,
        name: str = "vae-reference-bot",
        version: str = "",
        run_filter: str = "",
        listen: ListenSettings | None = None,
        supports_text: bool = True,
        supports_virtual_clock: bool = True,
        redirect_to: RedirectTo | None = None,
    ) -> None:
        self.stub, self.role, self.brain, self.synth = stub, role, brain, synth
        self.name, self.version, self.run_filter = name, version, run_filter
        self.listen = listen
        self.supports_text = supports_text
        self.supports_virtual_clock = supports_virtual_clock
        #: The session's line (its modality and clock), once one started.
        self._line: Line | None = None
        self.redirect_to = redirect_to
        self._outbox: asyncio.Queue[bridge_pb2.BotMessage | None] = asyncio.Queue()

    async def _requests(self) -> AsyncIterator[bridge_pb2.BotMessage]:
        while (msg := await self._outbox.get()) is not None:
            yield msg

    def _join(self, ticket: str = "") -> bridge_pb2.BotMessage:
        pcm = common_pb2.AUDIO_ENCODING_PCM16LE
        role = common_pb2.ROLE_USER if self.role == "user" else common_pb2.ROLE_AGENT
        return bridge_pb2.BotMessage(
            join=bridge_pb2.Join(
                role=role,
                bot=common_pb2.BotInfo(
                    name=self.name, version=self.version, labels={"tts": self.synth.name}
                ),
                send_format=common_pb2.AudioFormat(
                    encoding=pcm, sample_rate_hz=self.synth.sample_rate, channels=1
                ),
                receive_format=common_pb2.AudioFormat(
                    encoding=pcm, sample_rate_hz=RECEIVE_RATE, channels=1
                ),
                run_filter=self.run_filter,
                # Two frames a message: half the messages, and on the virtual clock
                # steps of 32 ms (the bridge takes the smaller of the two bots' asks).
                frames_per_message=FRAMES_PER_MESSAGE,
                supports_text=self.supports_text,
                supports_virtual_clock=self.supports_virtual_clock,
                accepts_redirect=self.redirect_to is not None,
                ticket=ticket,
            )
        )

    async def run(self) -> SessionOutcome | None:
        """Play one session; ``None`` when the bridge released us without one."""
        played = await self._stream(self.stub, "")
        if not isinstance(played, bridge_pb2.Redirect):
            return played
        if self.redirect_to is None:  # never asked for: the bridge broke the contract
            log.error("%s bot: redirected without accepting redirects", self.role)
            return None
        redirect = played
        log.info(
            "%s bot: session %s runs at %s (port %d)",
            self.role,
            redirect.session_id,
            redirect.worker,
            redirect.port,
        )
        played = await self._stream(self.redirect_to(redirect.port), redirect.ticket)
        if isinstance(played, bridge_pb2.Redirect):
            log.error("%s bot: a worker redirected again; joining the bridge anew", self.role)
            return None
        return played

    async def _stream(
        self, stub: bridge_pb2_grpc.BridgeServiceAsyncStub, ticket: str
    ) -> SessionOutcome | bridge_pb2.Redirect | None:
        """One Converse stream: a session played, a Redirect, or None (released)."""
        self._outbox = asyncio.Queue()
        self._outbox.put_nowait(self._join(ticket))
        call = stub.Converse(self._requests())  # the channel adds the token
        try:
            while True:
                msg = await _read(call)
                if msg is None or msg.HasField("wait_timeout"):
                    return None
                if msg.HasField("joined"):
                    log.info(
                        "%s bot joined the bridge (stream %s)", self.role, msg.joined.stream_id
                    )
                if msg.HasField("redirect"):
                    return msg.redirect
                if msg.HasField("session_start"):
                    return await self._play(call, session_info(msg.session_start))
        finally:
            self._outbox.put_nowait(None)
            call.cancel()

    async def _play(self, call: Any, info: SessionInfo) -> SessionOutcome | None:
        gate = Gate()
        listener = PeerTexts() if info.text else PeerListener(info.receive_rate, self.listen)
        voice = Voice(self.synth.sample_rate, self._send_audio, self._send_boundary, gate.poke)
        conv = Conversation(
            info, self.synth, voice, listener, self._send_event, gate=gate,
            send_text=lambda text: line.send_text(text),
        )  # fmt: skip
        line = self._line = Line(conv, self._outbox)
        outcome: SessionOutcome | None = None
        async with asyncio.TaskGroup() as tg:
            voice_task = tg.create_task(voice.run()) if line.paced else None
            brain_task = tg.create_task(self._run_brain(conv))
            while True:
                msg = await _read(call)
                if msg is None:
                    break
                which = msg.WhichOneof("message")
                if which == "audio":
                    await line.audio(msg.audio)
                elif which == "text":
                    await line.text(msg.text)
                elif which == "clock_tick":
                    await line.tick(msg.clock_tick)
                elif which == "dtmf":
                    await line.keys(msg.dtmf.digits)
                elif which == "peer_event" and msg.peer_event.HasField("transcript"):
                    text = msg.peer_event.transcript.text
                    await conv.peer.add(text)
                    if conv.record_history and not conv.reports_heard:
                        conv.history.append({"role": "user", "content": text})
                elif which == "state_sync":
                    conv.db.merge(json.loads(msg.state_sync.delta_json or "{}"))
                elif which == "notice":
                    log.info("%s: bridge notice: %s", info.session_id, msg.notice.message)
                elif which == "session_ending":
                    if line.keypad is not None:
                        await line.keypad.flush()  # keys heard just before the end
                    brain_task.cancel()
                    voice.close()
                    if voice_task is not None:
                        await voice_task
                    else:
                        await voice.finish()
                    for m in final_state_messages(conv.db.state, conv.history):
                        self._outbox.put_nowait(m)
                elif which == "session_ended":
                    ended = msg.session_ended
                    outcome = SessionOutcome(
                        info.session_id,
                        info.scenario_name,
                        bridge_pb2.StopReason.Name(ended.reason),
                        ended.clean_exit,
                        conv.db.state,
                    )
                    break
            brain_task.cancel()
            voice.close()
        return outcome

    async def _run_brain(self, conv: Conversation) -> None:
        try:
            await self.brain(conv)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a brain bug is logged and reported, not fatal to the stream
            log.exception("%s brain failed", conv.info.session_id)
            await conv.log(f"bot error: {exc!r}", common_pb2.LOG_LEVEL_ERROR)
        finally:
            conv.gate.finish()

    async def _send_audio(self, seq: int, offset: int, pcm: bytes, sent_ns: int) -> None:
        chunk = common_pb2.AudioChunk(
            sequence=seq, sample_offset=offset, pcm=pcm, sent_unix_nanos=sent_ns
        )
        if self._line is not None and self._line.hold(chunk):
            return  # goes out inside this step's ClockAck
        self._outbox.put_nowait(bridge_pb2.BotMessage(audio=chunk))

    async def _send_event(self, event: common_pb2.BotEvent) -> None:
        self._outbox.put_nowait(bridge_pb2.BotMessage(event=event))

    async def _send_boundary(self, what: str, offset: int) -> None:
        tts = common_pb2.SPEECH_SOURCE_TTS
        boundary = common_pb2.SpeechBoundary(source=tts, sample_offset=offset)
        event = common_pb2.BotEvent(bot_unix_nanos=time.time_ns())
        if what == "started":
            event.speech_started.CopyFrom(boundary)
        else:
            event.speech_stopped.CopyFrom(boundary)
        await self._send_event(event)
