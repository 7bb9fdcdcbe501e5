"""One session's RTVI conversation with a pipecat bot, whatever carries the messages.

The websocket connector carries RTVI inside pipecat's protobuf frames; the
WebRTC connector (``connectors.webrtc``) carries the same JSON messages on a
data channel. What they mean is the same either way, so it lives here once:
the handshake message, what the bot is told at SessionStart, state syncs and
text turns, the id-matched requests for the final state, and the bot's
messages turned into vae events (:mod:`.rtvi`) or text turns (:mod:`.text`).
The transport hands each received message (a parsed JSON object) to
:meth:`RtviConversation.receive` and sends what the other methods return.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from vae.bridge_service.connectors.base import (
    BotEvent,
    BotInfo,
    BotInput,
    FinalStatePart,
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
    def __init__(
        self,
        role: Side,
        options: PipecatOptions,
        out_offset: Callable[[], int],
        drain: Callable[[], list[BotInput]],
    ) -> None:
        self.options = options
        self.requests = Requests()
        self.text = PipecatText()
        self.rtvi = RtviTranslator(role, options.rtvi, time.time_ns, out_offset)
        #: Releases audio the transport holds back at the end of a bot turn.
        self._drain = drain
        self._final: dict[str, Any] = {}
        self.final_sent = False
        self.ending = False

    def client_ready(self) -> dict[str, Any]:
        about = {"library": "vae", "library_version": "1"}
        return rtvi(
            "client-ready", self.requests.new("ready"), {"version": "1.1.0", "about": about}
        )

    @staticmethod
    def bot_info(ready: dict[str, Any], url: str, connector: str) -> BotInfo:
        info = bot_info(ready, url)
        return BotInfo(info.name, info.version, {**info.labels, "connector": connector})

    def start(self, start: SessionStartInfo) -> list[dict[str, Any]]:
        self.text.on = start.modality == "text"
        return start_messages(start, self.options, self.requests)

    def sync(self, message: StateSyncOut) -> dict[str, Any]:
        body = {"t": "apply_sync_delta", "d": message.delta}
        return rtvi("client-message", self.requests.new("sync"), body)

    def peer_text(self, text: str) -> dict[str, Any]:
        return self.text.send_text(text, self.requests)

    def ending_messages(self) -> list[dict[str, Any]]:
        """The requests for the final state (SessionEnding)."""
        self.ending = True
        out = []
        for purpose, t, d in _FINAL:
            if getattr(self.options, f"fetch_{purpose}"):
                msg_id = self.requests.new(purpose, final=True)
                out.append(rtvi("client-message", msg_id, {"t": t, "d": d}))
        return out

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

    def final_ready(self) -> bool:
        return self.ending and not self.final_sent and not self.requests.pending_final()

    def final_part(self) -> FinalStatePart:
        self.final_sent = True
        summary = self._final.get("summary")
        state = summary.get("db", summary) if isinstance(summary, dict) else None
        context = self._final.get("context")
        if isinstance(context, dict) and "messages" in context:
            context = context["messages"]
        return FinalStatePart(json_piece(state), json_piece(context), done=True)
