"""One session's RTVI conversation with a pipecat bot, whatever carries the messages.

The websocket connector (:mod:`.connector`) carries RTVI inside pipecat's
protobuf frames; the WebRTC connector (``connectors.webrtc``) carries the same
JSON messages on a data channel. What they mean is the same either way, so it
lives here once and both connectors use it: the handshake message, what the
bot is told at SessionStart, state syncs and text turns, the id-matched
requests for the final state, and the bot's messages turned into vae events
(:mod:`.rtvi`) or text turns (:mod:`.text`). The transport hands each received
message (a parsed JSON object) to :meth:`RtviConversation.receive`, sends what
:meth:`RtviConversation.outgoing` returns for each of the session's messages,
and yields :meth:`RtviConversation.due_final` as it loops and
:meth:`RtviConversation.closing` when the bot has left. No I/O here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from vae.bridge_service.connectors.base import (
    BotEvent,
    BotInfo,
    BotInput,
    BridgeOutput,
    FinalStatePart,
    PeerText,
    SessionEndingOut,
    SessionStartInfo,
    StateSyncOut,
)
from vae.bridge_service.connectors.pipecat.messages import (
    Requests,
    bot_info,
    json_piece,
    rtvi,
    start_messages,
)
from vae.bridge_service.connectors.pipecat.options import PipecatOptions
from vae.bridge_service.connectors.pipecat.rtvi import RtviTranslator, as_dict
from vae.bridge_service.connectors.pipecat.text import LLM_TEXT, PipecatText
from vae.recordings.models import EventKind, Side

_FINAL: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("summary", "get_scenario_summary", {"include_db": True}),
    ("context", "get_context_history", {}),
)


class RtviConversation:
    """What one session says to a pipecat bot over RTVI, and what the bot's messages mean."""

    def __init__(
        self,
        role: Side,
        options: PipecatOptions,
        out_offset: Callable[[], int],
        drain: Callable[[], list[BotInput]],
    ) -> None:
        self.options = options
        #: Our requests awaiting an answer (numbered as they are made).
        self.requests = Requests()
        #: A text session: turns go as send-text, the bot's LLM text comes back as turns.
        self.text = PipecatText()
        self.rtvi = RtviTranslator(role, options.rtvi, time.time_ns, out_offset)
        #: Releases audio the transport holds back at the end of a bot turn.
        self._drain = drain
        self._final: dict[str, Any] = {}
        self.final_sent = False
        self.ending = False

    # ------------------------------------------------------------ bridge -> bot
    def client_ready(self) -> dict[str, Any]:
        about = {"library": "vae", "library_version": "1"}
        return rtvi(
            "client-ready", self.requests.new("ready"), {"version": "1.1.0", "about": about}
        )

    @staticmethod
    def bot_info(ready: dict[str, Any], url: str, connector: str) -> BotInfo:
        """Who the bot says it is in ``bot-ready``, labelled with the connector that reached it."""
        info = bot_info(ready, url)
        return BotInfo(info.name, info.version, {**info.labels, "connector": connector})

    def outgoing(self, message: BridgeOutput) -> list[dict[str, Any]]:
        """The RTVI messages that carry one of the session's messages (none for audio)."""
        if isinstance(message, PeerText):
            return [self.text.send_text(message.text, self.requests)]
        if isinstance(message, SessionStartInfo):
            self.text.on = message.modality == "text"
            return start_messages(message, self.options, self.requests)
        if isinstance(message, StateSyncOut):
            body = {"t": "apply_sync_delta", "d": message.delta}
            return [rtvi("client-message", self.requests.new("sync"), body)]
        if isinstance(message, SessionEndingOut):
            return self._ending_messages()
        return []

    def _ending_messages(self) -> list[dict[str, Any]]:
        """The requests for the final state (SessionEnding)."""
        self.ending = True
        out = []
        for purpose, t, d in _FINAL:
            if getattr(self.options, f"fetch_{purpose}"):
                msg_id = self.requests.new(purpose, final=True)
                out.append(rtvi("client-message", msg_id, {"t": t, "d": d}))
        return out

    # ------------------------------------------------------------ bot -> bridge
    def receive(self, msg: dict[str, Any]) -> list[BotInput]:
        """What one RTVI message from the bot means (BotProtocolError for a refused text)."""
        kind = msg.get("type")
        if kind in ("server-response", "error-response") and (purpose := self.requests.pop(msg)):
            self.text.check_response(purpose, msg)
            return self._response(purpose, msg)
        if self.text.on and kind in LLM_TEXT:
            return self.text.llm(str(kind), as_dict(msg.get("data")))
        head = self._drain() if kind == "bot-stopped-speaking" else []
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

    # ------------------------------------------------------------ the final state
    def due_final(self) -> list[BotInput]:
        """The final state once the session is ending and every request it waits for was
        answered (at most once); else nothing."""
        if self.ending and not self.final_sent and not self.requests.pending_final():
            return [self._final_part()]
        return []

    def closing(self) -> list[BotInput]:
        """What is left when the bot has gone: open tool calls, and the final state if due."""
        out: list[BotInput] = list(self.rtvi.flush())
        if self.ending and not self.final_sent:
            out.append(self._final_part())
        return out

    def _final_part(self) -> FinalStatePart:
        """The final state from the answers (a part left empty when there was none)."""
        self.final_sent = True
        summary = self._final.get("summary")
        state = summary.get("db", summary) if isinstance(summary, dict) else None
        context = self._final.get("context")
        if isinstance(context, dict) and "messages" in context:
            context = context["messages"]
        return FinalStatePart(json_piece(state), json_piece(context), done=True)
