"""What a pipecat bot sends over its WebSocket, decoded into bridge inputs.

Apart from :mod:`.connector` (the transport: the WebSocket, the handshake,
the receive loop, sending) as pipecat keeps its serializers apart from its
transports. This module turns each received WebSocket message (a protobuf
frame, :mod:`.frames`) into what the bridge records: audio (:mod:`.audio`),
transcripts, an interruption, and the RTVI messages that message frames
carry, whose meaning (events, text turns, answers to our requests, the final
state) is the RTVI conversation's (:mod:`.conversation`, shared with the
WebRTC connector). No I/O: it changes with pipecat's frames, never with how
the bot is reached.
"""

from __future__ import annotations

import json
import time

from vae.bridge_service.connectors.base import BotEvent, BotInput
from vae.bridge_service.connectors.pipecat.audio import BotAudioIn
from vae.bridge_service.connectors.pipecat.conversation import RtviConversation
from vae.bridge_service.connectors.pipecat.frames import (
    AudioFrame,
    FrameDecodeError,
    MessageFrame,
    TextFrame,
    TranscriptionFrame,
    decode,
)
from vae.bridge_service.connectors.pipecat.options import PipecatOptions
from vae.recordings.models import EventKind, Side


class Inbound:
    """One session's decoding state: the audio resamplers and the RTVI conversation."""

    def __init__(self, role: Side, options: PipecatOptions) -> None:
        self.audio = BotAudioIn(options.send_rate, options.max_chunk_ms)
        #: What the RTVI messages mean, and what the bot is sent (as JSON objects).
        self.talk = RtviConversation(
            role, options, lambda: self.audio.offset, lambda: list(self.audio.drain())
        )

    def handle(self, data: bytes | str) -> list[BotInput]:
        """What one WebSocket message from the bot records."""
        if isinstance(data, str):
            return [_malformed("a text WebSocket message (expected protobuf frames)", data)]
        try:
            frame = decode(data)
        except FrameDecodeError as exc:
            return [_malformed(f"undecodable frame: {exc}", data.hex()[:200])]
        if isinstance(frame, AudioFrame):
            if self.talk.text.on:
                return self.talk.text.ignored_audio()
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
        return self.talk.receive(msg)


def _malformed(problem: str, raw: str) -> BotEvent:
    payload = {"problem": problem, "raw": raw[:200]}
    return BotEvent(EventKind.MALFORMED_EVENT, time.time_ns(), payload, problem)
