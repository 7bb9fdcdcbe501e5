"""Twilio Media Streams messages: JSON text frames, built and parsed (no I/O).

The serializer half of the Twilio connector, the way pipecat keeps
``serializers/`` apart from ``transports/``: it knows the message shapes and
nothing about sockets or clocks, so it is tested on its own.

The bridge plays Twilio's part. It sends ``connected``, ``start`` (account,
call and stream sids, the track, the media format, custom parameters),
``media`` (base64 μ-law 8 kHz, 20 ms per message, with the chunk number and
the timestamp in ms since the stream started), ``mark`` (echoing the agent's
marks once the audio before them has played) and ``stop``; no ``dtmf`` (vae
has no source of key presses). It reads the agent's ``media``, ``mark``,
``clear`` and ``stop``.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

RATE = 8000
ENCODING = "audio/x-mulaw"


@dataclass(frozen=True)
class StreamIds:
    account_sid: str
    call_sid: str
    stream_sid: str


@dataclass(frozen=True)
class AgentMedia:
    ulaw: bytes


@dataclass(frozen=True)
class AgentMark:
    name: str


@dataclass(frozen=True)
class AgentClear:
    pass


@dataclass(frozen=True)
class AgentStop:
    pass


@dataclass(frozen=True)
class Unusable:
    """A message the connector cannot use; recorded as malformed, the call goes on."""

    problem: str
    raw: str


AgentMessage = AgentMedia | AgentMark | AgentClear | AgentStop | Unusable


class Outgoing:
    """Builds the messages Twilio sends, numbering them as Twilio does."""

    def __init__(self, ids: StreamIds) -> None:
        self.ids = ids
        self._sequence = 0
        self._chunk = 0

    def _next(self, event: str, **body: Any) -> str:
        self._sequence += 1
        msg: dict[str, Any] = {
            "event": event,
            "sequenceNumber": str(self._sequence),
            "streamSid": self.ids.stream_sid,
        }
        msg.update(body)
        return json.dumps(msg)

    def connected(self) -> str:
        # Twilio's `connected` carries no sequence number; `start` is 1.
        return json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"})

    def start(self, custom_parameters: dict[str, str]) -> str:
        return self._next(
            "start",
            start={
                "accountSid": self.ids.account_sid,
                "streamSid": self.ids.stream_sid,
                "callSid": self.ids.call_sid,
                "tracks": ["inbound"],
                "mediaFormat": {"encoding": ENCODING, "sampleRate": RATE, "channels": 1},
                "customParameters": dict(custom_parameters),
            },
        )

    def media(self, ulaw: bytes, timestamp_ms: int) -> str:
        self._chunk += 1
        return self._next(
            "media",
            media={
                "track": "inbound",
                "chunk": str(self._chunk),
                "timestamp": str(timestamp_ms),
                "payload": base64.b64encode(ulaw).decode("ascii"),
            },
        )

    def mark(self, name: str) -> str:
        return self._next("mark", mark={"name": name})

    def dtmf(self, digit: str) -> str:
        """One key the caller pressed, as Twilio reports it (one message per key)."""
        return self._next("dtmf", dtmf={"track": "inbound_track", "digit": digit})

    def stop(self) -> str:
        return self._next(
            "stop", stop={"accountSid": self.ids.account_sid, "callSid": self.ids.call_sid}
        )


def parse(data: str | bytes) -> AgentMessage:
    """One message from the agent."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    try:
        msg = json.loads(text)
    except json.JSONDecodeError:
        return Unusable("not JSON", text[:200])
    if not isinstance(msg, dict):
        return Unusable("not a JSON object", text[:200])
    event = msg.get("event")
    if event == "media":
        media = msg.get("media")
        payload = media.get("payload") if isinstance(media, dict) else None
        if not isinstance(payload, str):
            return Unusable("media without media.payload", text[:200])
        try:
            return AgentMedia(base64.b64decode(payload, validate=True))
        except (binascii.Error, ValueError):
            return Unusable("media.payload is not base64", text[:200])
    if event == "mark":
        mark = msg.get("mark")
        name = mark.get("name") if isinstance(mark, dict) else None
        if not isinstance(name, str):
            return Unusable("mark without mark.name", text[:200])
        return AgentMark(name)
    if event == "clear":
        return AgentClear()
    if event == "stop":
        return AgentStop()
    return Unusable(f"unknown event {event!r}", text[:200])
