"""A session's inputs: bot messages in, checked, recorded, relayed.

:class:`SessionIO` is :class:`~vae.bridge_service.session.state.SessionState` (the
per-session audio path, recorder, counters, collectors, state sync and the
outputs to each bot) plus one reader per side; the open-mic clock
(``session_clock``) delivers what the readers buffer.

Bad input from one bot is refused here with a :class:`BotProtocolError` naming
the field; it ends this session with ``bot_error``, is recorded, and
never touches another session. What is merely odd (a sequence gap, malformed
JSON in an event, audio beyond the bounded buffer, a bot that stops reading)
is recorded, the bot gets a ``Notice``, and the session goes on. A bot whose
stream breaks or closes mid-call ends the session ``bot_disconnected``; an
exception in the bridge's own handling of a message is never blamed on the
bot: it ends the session ``bridge_error`` (unfinished, run again).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from vae.bridge_service.config import StopReason
from vae.bridge_service.connectors.base import (
    BotAudio,
    BotEvent,
    BotExited,
    BotProtocolError,
    BotText,
    ClockAck,
    FinalStatePart,
    PeerEvent,
    StateSyncOut,
)
from vae.bridge_service.session import dtmf_out
from vae.bridge_service.session.ending import EndRequest, end_request_for
from vae.bridge_service.session.state import SessionState
from vae.bridge_service.session.text_turns import deliver, record_turn
from vae.recordings.models import Channel, EventKind, Side
from vae.recordings.scenarios.hooks import SyncHookError

log = logging.getLogger("vae.bridge.session")

_PEER = {Side.USER: Side.AGENT, Side.AGENT: Side.USER}
_TO = {Side.AGENT: Channel.TO_AGENT, Side.USER: Channel.TO_USER}
#: Longest stretch of input handling before the reader yields to the loop.
_TURN_NS = 2_000_000


class SessionIO(SessionState):
    # ------------------------------------------------------------ input
    async def read(self, side: Side) -> None:
        """Handle one bot's messages until its stream ends.

        Only a failure of the stream itself (``receive``) is the bot leaving
        (``bot_disconnected``); an exception in the bridge's own handling of a
        message propagates, so the session ends ``bridge_error`` and is re-run.
        """
        messages = aiter(self.endpoints[side].receive())
        turn_start = last_done = 0
        while True:
            try:
                message = await anext(messages)
            except StopAsyncIteration:
                break
            except BotProtocolError as exc:
                await self._fail(side, exc)
                return
            except BotExited as exc:
                await self._exited(side, exc)
                return
            except Exception as exc:
                log.warning("%s bot stream failed: %s", side, exc)
                await self.record(side, EventKind.SESSION_ERROR, {"error": str(exc)})
                break
            now = time.monotonic_ns()
            if now - last_done > _TURN_NS // 8:
                turn_start = now  # we waited for this message: a fresh turn
            elif now - turn_start > _TURN_NS:
                # A backlog of queued input (a flooding bot) is handled without
                # suspending; give the loop back so no clock waits behind it.
                await asyncio.sleep(0)
                turn_start = time.monotonic_ns()
            try:
                if isinstance(message, BotAudio):
                    await self._on_audio(side, message)
                elif isinstance(message, BotEvent):
                    await self._on_event(side, message)
                elif isinstance(message, ClockAck):
                    if message.audio is not None:
                        await self._on_audio(side, message.audio)
                    self._on_ack(side, message)
                elif isinstance(message, BotText):
                    await self._on_text(side, message)
                elif isinstance(message, FinalStatePart) and await self.collectors[side].add(
                    message
                ):
                    self.final_done[side].set()
            except BotProtocolError as exc:
                await self._fail(side, exc)
                return
            last_done = time.monotonic_ns()
        self.final_done[side].set()
        if self._end is None:
            self._gone.add(side)
            self.request_end(
                EndRequest(StopReason.BOT_DISCONNECTED, f"the {side} bot left mid-call")
            )

    async def _fail(self, side: Side, exc: BotProtocolError) -> None:
        await self.record(side, EventKind.SESSION_ERROR, {"field": exc.field, "error": str(exc)})
        if exc.field.startswith("max_final_state"):
            # Over a final-state limit: keep none of it rather than a cut document
            # (and delete what was spooled to disk).
            self.collectors[side].discard()
        self._gone.add(side)
        self._closed.add(side)
        self.final_done[side].set()
        with contextlib.suppress(Exception):
            await self.endpoints[side].close(exc)
        self.request_end(EndRequest(StopReason.BOT_ERROR, f"the {side} bot sent bad input: {exc}"))

    async def _exited(self, side: Side, exc: BotExited) -> None:
        """The bot's own process ended the call: its stop reason, its stderr tail recorded."""
        payload = {"error": exc.detail, "stop_reason": exc.stop_reason, "stderr_tail": exc.log_tail}
        await self.record(side, EventKind.SESSION_ERROR, payload)
        self._gone.add(side)
        self.final_done[side].set()
        self.request_end(EndRequest(StopReason(exc.stop_reason), exc.detail))

    async def _on_audio(self, side: Side, chunk: BotAudio) -> None:
        if self.text:
            raise BotProtocolError(
                "audio",
                "audio is not valid in a text session (SessionStart.modality is text): "
                "send each turn as a TextTurn",
            )
        size = len(chunk.pcm)
        if size % 2:
            raise BotProtocolError("audio.pcm", f"odd byte count {size}: PCM16 needs whole samples")
        if size > self.plan.bridge.max_chunk_bytes:
            raise BotProtocolError(
                "audio.pcm",
                f"{size} bytes exceeds the {self.plan.bridge.max_chunk_bytes}-byte chunk limit",
            )
        now = self.time_ns()
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
        if self.spurts[side].add(chunk.pcm, now):
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

    async def _on_text(self, side: Side, turn: BotText) -> None:
        """A text turn: on the real clock recorded and delivered now; virtual: at the step's end."""
        if not self.text:
            raise BotProtocolError(
                "text",
                "a TextTurn is only valid in a text session (SessionStart.modality is audio): "
                "send audio",
            )
        if self.time.virtual and self.delivering:
            self.text_inbox.append((side, turn))
            return
        now = self.time_ns()
        await record_turn(self, side, turn, now, now)
        if self.delivering:
            await deliver(self, side, turn.text, now)

    def _on_ack(self, side: Side, ack: ClockAck) -> None:
        if not self.time.virtual:
            raise BotProtocolError(
                "clock_ack",
                "ClockAck is only valid on the virtual clock (SessionStart.clock is real)",
            )
        if not self.delivering:
            return  # still in flight when the clock stopped
        sent = self.step_sent[side]
        if ack.step != sent or self.acked[side] >= ack.step:
            problem = (
                f"step {ack.step} was already answered"
                if ack.step == sent
                else f"step {ack.step} is not the step being played ({sent}): answer each "
                "step once, in order"
            )
            raise BotProtocolError("clock_ack.step", problem)
        self.acked[side] = ack.step
        self.wake_at_ms[side] = ack.wake_at_ms
        self.acks_changed.set()

    async def _on_event(self, side: Side, event: BotEvent) -> None:
        if event.problem:
            payload = {"problem": event.problem, "kind": str(event.kind), "event": event.payload}
            await self.record(side, EventKind.MALFORMED_EVENT, payload, event.bot_ns)
            await self.notice(side, "malformed_event", event.problem)
            return
        if event.kind is EventKind.DTMF and side is Side.USER:
            payload = await dtmf_out.carry(self, event.payload)
            await self.record(side, event.kind, payload, event.bot_ns)
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
