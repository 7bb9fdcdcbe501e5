"""The agent's half of a Twilio call, without the socket: its messages as bridge inputs.

Apart from :mod:`.connector` (the socket: dialling, the real-time receive
loop, sending) the way pipecat keeps serializers apart from transports: this
module decides what each of the agent's messages does to the line
(:mod:`.playout`) and what the recording says about it — the played frames,
audio dropped for running far ahead of real time, ``clear`` (a barge-in), a
``mark`` answered, ``stop``, an unusable message, the hang-up and a stream
that broke. It changes with Twilio's call semantics, never with the socket.
"""

from __future__ import annotations

import time

from vae.bridge_service.connectors.base import BotAudio, BotEvent, BotInput
from vae.bridge_service.connectors.twilio import mulaw
from vae.bridge_service.connectors.twilio.playout import Playout
from vae.bridge_service.connectors.twilio.protocol import (
    RATE,
    AgentClear,
    AgentMark,
    AgentMedia,
    AgentMessage,
    AgentStop,
)
from vae.recordings.models import EventKind, Side


class AgentLine:
    """The agent's audio queued on the line, and what each of its messages records."""

    def __init__(self, role: Side, media_ms: int, max_queue_s: float) -> None:
        self.role = role
        self.playout = Playout(RATE * media_ms // 1000)
        self._max_queue = int(max_queue_s * RATE)

    def play(self, n: int) -> tuple[BotAudio, list[str]]:
        """Frame ``n`` of the line (silence when nothing is queued) and the marks it reached."""
        frame = self.playout.pop()
        samples = self.playout.frame_samples
        return BotAudio(n, n * samples, frame.pcm, time.time_ns()), frame.marks

    def take(self, message: AgentMessage) -> tuple[list[BotInput], list[str]]:
        """What ``message`` records, and the marks to answer at once (those ``clear`` dropped)."""
        now = time.time_ns()
        if isinstance(message, AgentMedia):
            if self.playout.queued_samples + len(message.ulaw) > self._max_queue:
                # A bot streaming far ahead of real time: keep memory bounded, say so.
                payload = {
                    "reason": "agent_faster_than_real_time",
                    "samples": len(message.ulaw),
                    "queued_s": self.playout.queued_samples / RATE,
                }
                return [BotEvent(EventKind.AUDIO_DROPPED, now, payload)], []
            self.playout.push(mulaw.decode(message.ulaw))
            return [], []
        if isinstance(message, AgentMark):
            self.playout.mark(message.name)
            return [], []
        if isinstance(message, AgentClear):
            dropped, marks = self.playout.clear()
            ms = dropped * 1000 / RATE
            payload = {
                "level": "info",
                "message": f"twilio clear: dropped {ms:.0f} ms of agent audio not yet played",
                "twilio_event": "clear",
                "dropped_samples": dropped,
            }
            return [BotEvent(EventKind.LOG, now, payload)], marks
        if isinstance(message, AgentStop):
            payload = {
                "level": "info",
                "message": "twilio stop from the bot",
                "twilio_event": "stop",
            }
            return [BotEvent(EventKind.LOG, now, payload)], []
        payload = {"problem": message.problem, "raw": message.raw}
        return [BotEvent(EventKind.MALFORMED_EVENT, now, payload, message.problem)], []

    def hang_up(self) -> BotEvent:
        """The agent closed the stream cleanly or sent ``stop``: it hung up."""
        kind = "agent_end_tool" if self.role is Side.AGENT else "user_hang_up"
        reason = f"the {self.role} bot closed the media stream (hung up)"
        return BotEvent(
            EventKind.END_CONVERSATION, time.time_ns(), {"kind": kind, "reason": reason}
        )

    def broken(self, error: str, close_code: int) -> BotEvent:
        """The stream closed with an error: no hang-up, the bot left."""
        payload = {
            "level": "error",
            "message": f"the {self.role} bot's media stream closed with an error ({error})",
            "close_code": close_code,
        }
        return BotEvent(EventKind.LOG, time.time_ns(), payload)


def mark_answered(name: str, why: str) -> BotEvent:
    """The record of a ``mark`` echoed to the agent (``played`` or ``cleared``)."""
    payload = {
        "level": "info",
        "message": f"twilio mark {name!r} answered ({why})",
        "twilio_event": "mark",
        "mark": name,
        "why": why,
    }
    return BotEvent(EventKind.LOG, time.time_ns(), payload)
