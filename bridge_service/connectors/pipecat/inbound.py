"""What a pipecat bot sends, decoded into bridge inputs, and the final state from its answers.

Apart from :mod:`.connector` (the transport: the WebSocket, the handshake,
the receive loop, sending) as pipecat keeps its serializers apart from its
transports. This module turns each received WebSocket message into what the
bridge records: audio (:mod:`.audio`), transcripts, RTVI events
(:mod:`.rtvi`), text turns (:mod:`.text`), the answers to our requests
(matched by id, :mod:`.messages`), and the final state assembled from the
answers to ``get_scenario_summary`` and ``get_context_history``. No I/O: it
changes with what the bot says, never with how it is reached.
"""

from __future__ import annotations

import json
import time
from typing import Any

from vae.bridge_service.connectors.base import BotEvent, BotInput, FinalStatePart
from vae.bridge_service.connectors.pipecat.audio import BotAudioIn
from vae.bridge_service.connectors.pipecat.frames import (
    AudioFrame,
    FrameDecodeError,
    MessageFrame,
    TextFrame,
    TranscriptionFrame,
    decode,
)
from vae.bridge_service.connectors.pipecat.messages import Requests, json_piece
from vae.bridge_service.connectors.pipecat.options import PipecatOptions
from vae.bridge_service.connectors.pipecat.rtvi import RtviTranslator, as_dict
from vae.bridge_service.connectors.pipecat.text import LLM_TEXT, PipecatText
from vae.recordings.models import EventKind, Side


class Inbound:
    """One session's decoding state: audio resamplers, open requests, the turn's text."""

    def __init__(self, role: Side, options: PipecatOptions) -> None:
        self.audio = BotAudioIn(options.send_rate, options.max_chunk_ms)
        #: Our requests awaiting an answer (the transport numbers them as it sends).
        self.requests = Requests()
        #: A text session: turns go as send-text, the bot's LLM text comes back as turns.
        self.text = PipecatText()
        self.rtvi = RtviTranslator(role, options.rtvi, time.time_ns, lambda: self.audio.offset)
        self._final: dict[str, Any] = {}
        self.final_sent = False

    def handle(self, data: bytes | str) -> list[BotInput]:
        """What one WebSocket message from the bot records."""
        if isinstance(data, str):
            return [_malformed("a text WebSocket message (expected protobuf frames)", data)]
        try:
            frame = decode(data)
        except FrameDecodeError as exc:
            return [_malformed(f"undecodable frame: {exc}", data.hex()[:200])]
        if isinstance(frame, AudioFrame):
            if self.text.on:
                return self.text.ignored_audio()
            return self._audio(frame)
        if isinstance(frame, MessageFrame):
            return self._message(frame.data)
        if isinstance(frame, TranscriptionFrame):
            payload = {"kind": "heard", "text": frame.text, "is_final": True}
            return [BotEvent(EventKind.TRANSCRIPT, time.time_ns(), payload)]
        if isinstance(frame, TextFrame):
            payload = {"kind": "spoken", "text": frame.text, "is_final": False, "source": "text"}
            return [BotEvent(EventKind.TRANSCRIPT, time.time_ns(), payload)]
        return [
            BotEvent(EventKind.LOG, time.time_ns(), {"level": "info", "message": "interruption"})
        ]

    def _audio(self, frame: AudioFrame) -> list[BotInput]:
        try:
            return list(self.audio.frame(frame.audio, frame.sample_rate, frame.num_channels))
        except ValueError as exc:
            return [_malformed(str(exc), "")]

    def _message(self, text: str) -> list[BotInput]:
        try:
            msg = json.loads(text)
        except json.JSONDecodeError:
            return [_malformed("message frame is not JSON", text[:200])]
        if not isinstance(msg, dict):
            return [_malformed("message frame is not a JSON object", text[:200])]
        kind = msg.get("type")
        if kind in ("server-response", "error-response") and (purpose := self.requests.pop(msg)):
            self.text.check_response(purpose, msg)
            return self._response(purpose, msg)
        if self.text.on and kind in LLM_TEXT:
            return self.text.llm(str(kind), as_dict(msg.get("data")))
        head: list[BotInput] = list(self.audio.drain()) if kind == "bot-stopped-speaking" else []
        return head + list(self.rtvi.translate(msg))

    def _response(self, purpose: str, msg: dict[str, Any]) -> list[BotInput]:
        body = as_dict(msg.get("data"))
        if msg.get("type") == "error-response":
            level, text = "warning", f"{purpose} refused: {body.get('error', body)}"
            result: Any = None
        else:
            level, text, result = "info", f"{purpose} acknowledged", body.get("d")
        if purpose in ("summary", "context"):
            self._final[purpose] = result
        events: list[BotInput] = [
            BotEvent(EventKind.LOG, time.time_ns(), {"level": level, "message": text})
        ]
        if purpose == "summary" and isinstance(result, dict):
            events.extend(self.rtvi.calls.summary_actions(result))
        return events

    def final_ready(self, ending: bool) -> bool:
        """The session is ending, and every request the final state waits for was answered."""
        return ending and not self.final_sent and not self.requests.pending_final()

    def final_part(self) -> FinalStatePart:
        """The final state from the answers (a part left empty when there was none)."""
        self.final_sent = True
        summary = self._final.get("summary")
        state = summary.get("db", summary) if isinstance(summary, dict) else None
        context = self._final.get("context")
        if isinstance(context, dict) and "messages" in context:
            context = context["messages"]
        return FinalStatePart(json_piece(state), json_piece(context), done=True)


def _malformed(problem: str, raw: str) -> BotEvent:
    payload = {"problem": problem, "raw": raw[:200]}
    return BotEvent(EventKind.MALFORMED_EVENT, time.time_ns(), payload, problem)
