"""One Converse stream: Join, wait for a session, play it, answer FinalState.

The stream is driven by up to three tasks in one TaskGroup — the reader (peer
audio or text turns to the listener, peer transcripts, state syncs, clock
steps, the ending), the voice (paced audio out, on the real clock only) and
the brain. Outgoing messages go through one queue feeding the request
iterator, so the tasks never write to the stream concurrently. On
SessionEnding the brain is cancelled wherever it is, the voice closed, and the
final state sent in chunks. The messages themselves — the Join, SessionStart
as plain data, the FinalState chunks — are built and read by
:mod:`vae.bots.messages`.

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

from vae.bots.brains.conversation import Conversation
from vae.bots.brains.gate import Gate
from vae.bots.brains.session_info import SessionInfo
from vae.bots.line import Line
from vae.bots.messages import final_state_messages, join_message, session_info
from vae.bots.sound.listening import ListenSettings, PeerListener, PeerTexts
from vae.bots.sound.speech import Synthesiser
from vae.bots.sound.voice import Voice
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.common.v1 import common_pb2

log = logging.getLogger("vae.bots.client")

Brain = Callable[[Conversation], Awaitable[None]]
#: A stub for the worker at this port, on the host the bot dialled.
RedirectTo = Callable[[int], "bridge_pb2_grpc.BridgeServiceAsyncStub"]


@dataclass
class SessionOutcome:
    session_id: str
    scenario_name: str
    stop_reason: str
    clean_exit: bool
    final_state: dict[str, Any]


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
        self._outbox.put_nowait(
            join_message(
                self.role,
                self.synth,
                name=self.name,
                version=self.version,
                run_filter=self.run_filter,
                supports_text=self.supports_text,
                supports_virtual_clock=self.supports_virtual_clock,
                accepts_redirect=self.redirect_to is not None,
                ticket=ticket,
            )
        )
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
