"""What a LiveKit console agent sends, turned into bridge inputs.

Apart from :mod:`.connector` (the transport: the TCP stream, the handshake,
the receive loop with its crash and silence checks, sending) as the pipecat
connector keeps :mod:`~vae.bridge_service.connectors.pipecat.inbound` apart:
this changes with what the console protocol says, not with how the agent is
reached or watched. Per message: ``audio_output`` is played as the console's
speaker plays it (:mod:`.playback`), a flush or clear as the speaker handles
them, a session event becomes vae events (:mod:`.events`) and, in a text
session, the assistant's new messages become text turns; a response is
matched to our request by id (the chat history asked at SessionEnding is
kept for the final state). No I/O: telling the agent its playback finished
is the transport's (``finished``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from vae.bridge_service.connectors.base import BotEvent, BotInput, BotText
from vae.bridge_service.connectors.livekit.events import EventTranslator
from vae.bridge_service.connectors.livekit.options import LivekitOptions
from vae.bridge_service.connectors.livekit.playback import AgentPlayback
from vae.recordings.models import EventKind, Side


class AgentInbound:
    """One session's reading of the agent: its speaker, its events, its text turns."""

    def __init__(
        self, role: Side, options: LivekitOptions, pb: Any, finished: Callable[[], None]
    ) -> None:
        self.playback = AgentPlayback(options.send_rate, options.max_queue_s)
        self.events = EventTranslator(role, options, pb, lambda: self.playback.played)
        #: Our requests awaiting an answer: id -> purpose ("info", "text", "history", ...).
        self.requests: dict[str, str] = {}
        #: A text session: no audio either way, the agent's messages are the turns.
        self.text = False
        #: The agent has said something (audio or a text turn): it is not silent.
        self.spoke = False
        #: The chat history asked at SessionEnding (MessageToDict items), once answered.
        self.history: Any = None
        self.history_done = asyncio.Event()
        self._turns = 0
        #: Tells the agent a played message is done (``AudioPlaybackFinished``).
        self._finished = finished

    def play(self, n: int) -> list[BotInput]:
        """Frame ``n`` of the speaker's output (silence when nothing plays)."""
        audio, finished = self.playback.play(n)
        for _ in range(finished):
            self._finished()
        return [audio]

    def handle(self, message: Any) -> list[BotInput]:
        """What one ``AgentSessionMessage`` from the agent records."""
        kind = message.WhichOneof("message")
        if kind == "audio_output":
            if self.text:
                return []
            self.spoke = True
            return list(self.playback.audio(message.audio_output))
        if kind == "audio_playback_flush":
            if self.text:
                self._finished()  # nothing plays in a text session: done at once
            else:
                self.playback.flush()
            return []
        if kind == "audio_playback_clear":
            return [self.playback.clear()]
        if kind == "response":
            return self._response(message.response)
        items: list[BotInput] = list(self.events.translate(message.event))
        if self.text and len(self.events.said) > self._turns:
            for text in self.events.said[self._turns :]:
                self.spoke = True
                items.append(BotText(text, 0, self._turns, time.time_ns()))
                self._turns += 1
        return items

    def _response(self, response: Any) -> list[BotInput]:
        purpose = self.requests.pop(response.request_id, "")
        if response.HasField("error"):
            message = f"the agent refused {purpose or 'a request'}: {response.error}"
            if purpose == "history":
                self.history_done.set()
            return [
                BotEvent(EventKind.LOG, time.time_ns(), {"level": "warning", "message": message})
            ]
        if purpose == "history":
            from google.protobuf.json_format import MessageToDict

            self.history = [MessageToDict(item) for item in response.get_chat_history.items]
            self.history_done.set()
        return []
