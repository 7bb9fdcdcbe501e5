"""A pipecat bot's side of a text session, over RTVI.

In a text session (``RunOptions.modality`` text) the pipecat connector sends
no audio. Each of the peer's turns goes to the bot as an RTVI ``send-text``
with ``run_immediately`` and ``audio_response: false``: pipecat's
RTVIProcessor appends it to the LLM context and runs the LLM with its TTS
skipped. The bot's answer — the ``bot-llm-text`` pieces between
``bot-llm-started`` and ``bot-llm-stopped``, which pipecat's RTVIObserver
reports — becomes one text turn. Tested with pipecat-ai 1.14.0. A pipecat
whose RTVIProcessor does not know ``send-text`` answers it with an
``error-response``: the session then ends ``bot_error`` naming it, never in
audio instead; audio the bot sends anyway is ignored (one log event).
"""

from __future__ import annotations

import time
from typing import Any

from vae.bridge_service.connectors.base import BotEvent, BotInput, BotProtocolError, BotText
from vae.bridge_service.connectors.pipecat.messages import Requests, rtvi
from vae.bridge_service.connectors.pipecat.rtvi import as_dict
from vae.recordings.models import EventKind

#: The RTVI messages that carry the bot's LLM answer.
LLM_TEXT = frozenset({"bot-llm-started", "bot-llm-text", "bot-llm-stopped"})


class PipecatText:
    """Text turns to and from one pipecat bot (``on`` in a text session)."""

    def __init__(self) -> None:
        self.on = False
        self._reply: list[str] | None = None
        self._turns = 0
        self._audio_ignored = False

    @staticmethod
    def send_text(text: str, requests: Requests) -> dict[str, Any]:
        """The RTVI message carrying the peer's turn."""
        body = {"content": text, "options": {"run_immediately": True, "audio_response": False}}
        return rtvi("send-text", requests.new("text"), body)

    def check_response(self, purpose: str, msg: dict[str, Any]) -> None:
        """Raise BotProtocolError when the bot refused one of our send-text messages."""
        if not self.on or purpose not in ("text", "kickoff") or msg.get("type") != "error-response":
            return
        error = as_dict(msg.get("data")).get("error", msg.get("data"))
        raise BotProtocolError(
            "send-text",
            f"the pipecat bot refused RTVI send-text ({error}); a text session needs "
            "a pipecat whose RTVIProcessor handles send-text (tested: pipecat-ai 1.14.0)",
        )

    def llm(self, kind: str, data: dict[str, Any]) -> list[BotInput]:
        """The bot's LLM answer, streamed as pieces, as one text turn."""
        if kind == "bot-llm-started":
            self._reply = []
        elif kind == "bot-llm-text":
            if self._reply is None:
                self._reply = []
            self._reply.append(str(data.get("text", "")))
        else:
            text = "".join(self._reply or []).strip()
            self._reply = None
            if text:
                self._turns += 1
                return [BotText(text, 0, self._turns - 1, time.time_ns())]
        return []

    def ignored_audio(self) -> list[BotInput]:
        if self._audio_ignored:
            return []
        self._audio_ignored = True
        message = "audio from the bot in a text session was ignored (its TTS should be skipped)"
        return [BotEvent(EventKind.LOG, time.time_ns(), {"level": "warning", "message": message})]
