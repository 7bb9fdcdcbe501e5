"""RTVI messages from a pipecat bot, translated into vae events.

RTVI messages arrive as JSON inside pipecat ``MessageFrame`` s (label
``rtvi-ai``). The translation (payloads follow the recorded-event convention
of ``tests/factories.py``):

====================================  ==========================================
RTVI message                          vae event
====================================  ==========================================
``user-transcription``                transcript, kind ``heard`` (final/partial)
``user-started/stopped-speaking``     speech_started/stopped, source ``vad``
``bot-started/stopped-speaking``      speech_started/stopped, source ``tts``
``bot-tts-text`` (else ``bot-output``  one spoken transcript per bot turn, sent at
spoken, else ``bot-transcription``)   ``bot-stopped-speaking``
``metrics`` ttfb/ttfa/processing      metric (seconds, component = processor)
``metrics`` tokens                    token_usage, one per entry
``metrics`` characters / stt_usage    metric ``characters`` / ``stt_seconds`` (:mod:`.usage`)
``llm-function-call*``                tool_call when the call stops (arguments
                                      from the earlier messages); is_write only
                                      for names in ``write_tools``
``server-message`` ``action-applied``  tool_call, is_write (the established
                                      framework's write tools announce these)
``server-message`` text ``<exit>``,   end_conversation (agent: end tool; user:
a call to one of ``end_tools``        hang-up)
``error`` / anything else             log
====================================  ==========================================

Audio-level and other chatty messages are dropped (they carry nothing the
recording does not already hold). Function calls and write actions are
joined and recorded by :mod:`.rtvi_calls`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vae.bridge_service.connectors.base import BotEvent
from vae.bridge_service.connectors.pipecat.rtvi_calls import RtviCalls
from vae.bridge_service.connectors.pipecat.usage import usage_events
from vae.recordings.models import EventKind, Side

_IGNORED = frozenset(
    {
        "bot-audio-level",
        "user-audio-level",
        "bot-llm-started",
        "bot-llm-stopped",
        "bot-tts-started",
        "bot-tts-stopped",
        "bot-llm-text",
        "user-llm-text",
        "llm-raw-text",
        "tts-raw-text",
        "stt-raw-text",
        "bot-tts-audio",
        "bot-ready",
        "bot-llm-marker",
        "vad-user-started-speaking",
        "vad-user-stopped-speaking",
        # The bot's echo of text we sent with send-text (recorded by the bridge already).
        "user-input",
    }
)
_TIMINGS = ("ttfb", "ttfa", "ttfat", "processing")


@dataclass(frozen=True)
class RtviOptions:
    #: A server-message text starting with one of these ends the conversation.
    end_markers: tuple[str, ...] = ("<exit>",)
    #: Function calls that end the conversation (the bot's end tool).
    end_tools: frozenset[str] = frozenset(
        {"end_conversation", "EndConversationTool", "end_call", "hang_up"}
    )
    #: Function calls recorded as write actions.
    write_tools: frozenset[str] = frozenset()


class RtviTranslator:
    """Stateful: accumulates a bot turn's text (and, in :attr:`calls`, function calls)."""

    def __init__(
        self,
        role: Side,
        options: RtviOptions,
        now_ns: Callable[[], int],
        out_offset: Callable[[], int],
    ) -> None:
        self.role = role
        self.options = options
        self._now = now_ns
        self._offset = out_offset
        self._text: dict[str, list[str]] = {}
        self.calls = RtviCalls(role, options.write_tools, self._event)
        self.ended = False

    def _event(self, kind: EventKind, payload: dict[str, Any], problem: str = "") -> BotEvent:
        return BotEvent(kind, self._now(), payload, problem)

    def translate(self, msg: dict[str, Any]) -> list[BotEvent]:
        kind = str(msg.get("type", ""))
        data = msg.get("data")
        body: dict[str, Any] = data if isinstance(data, dict) else {}
        if kind in _IGNORED:
            return []
        if kind == "user-transcription":
            return [
                self._event(
                    EventKind.TRANSCRIPT,
                    {
                        "kind": "heard",
                        "text": str(body.get("text", "")),
                        "is_final": bool(body.get("final", False)),
                    },
                )
            ]
        if kind in ("user-started-speaking", "user-stopped-speaking"):
            ev = (
                EventKind.SPEECH_STARTED
                if kind.endswith("started-speaking")
                else EventKind.SPEECH_STOPPED
            )
            return [self._event(ev, {"source": "vad", "sample_offset": -1})]
        if kind == "bot-started-speaking":
            self._text = {}
            return [
                self._event(
                    EventKind.SPEECH_STARTED, {"source": "tts", "sample_offset": self._offset()}
                )
            ]
        if kind == "bot-stopped-speaking":
            out = self.flush()
            out.insert(
                0,
                self._event(
                    EventKind.SPEECH_STOPPED, {"source": "tts", "sample_offset": self._offset()}
                ),
            )
            return out
        if kind in ("bot-tts-text", "bot-transcription") or (
            kind == "bot-output" and body.get("spoken")
        ):
            self._text.setdefault(kind, []).append(str(body.get("text", "")))
            return []
        if kind == "bot-output":
            return []
        if kind == "metrics":
            return self._metrics(body)
        if kind.startswith("llm-function-call"):
            return self._function_call(kind, body)
        if kind == "server-message":
            return self._server_message(data)
        level = "error" if kind == "error" else "info"
        text = json.dumps(msg, default=str)[:2000]
        return [self._event(EventKind.LOG, {"level": level, "message": f"rtvi {kind}: {text}"})]

    def flush(self) -> list[BotEvent]:
        """The bot turn's text as one spoken transcript (empty if none was reported)."""
        for source in ("bot-tts-text", "bot-output", "bot-transcription"):
            parts = self._text.get(source)
            if parts:
                self._text = {}
                text = _join(parts)
                return [
                    self._event(
                        EventKind.TRANSCRIPT,
                        {"kind": "spoken", "text": text, "is_final": True, "source": source},
                    )
                ]
        return []

    def _metrics(self, body: dict[str, Any]) -> list[BotEvent]:
        out: list[BotEvent] = []
        for name in _TIMINGS:
            for item in _items(body.get(name)):
                value = item.get("value")
                if isinstance(value, int | float) and not isinstance(value, bool):
                    component = str(item.get("processor", ""))
                    out.append(
                        self._event(
                            EventKind.METRIC,
                            {
                                "name": name,
                                "value": float(value),
                                "unit": "s",
                                "component": component,
                            },
                        )
                    )
        for item in _items(body.get("tokens")):
            out.append(
                self._event(
                    EventKind.TOKEN_USAGE,
                    {
                        "model": str(item.get("model", "") or ""),
                        "prompt_tokens": int(item.get("prompt_tokens", 0) or 0),
                        "completion_tokens": int(item.get("completion_tokens", 0) or 0),
                    },
                )
            )
        return out + usage_events(body, self._event)

    def _function_call(self, kind: str, body: dict[str, Any]) -> list[BotEvent]:
        call = self.calls.function_call(kind, body)
        if call is None:
            return []
        name = str(call.payload["name"])
        if name in self.options.end_tools and not call.payload["error"]:
            return [call, *self._end(f"end tool {name}")]
        return [call]

    def _server_message(self, data: Any) -> list[BotEvent]:
        if isinstance(data, dict) and data.get("type") == "action-applied":
            return [self.calls.applied(as_dict(data.get("action")))]
        text = data.get("text") if isinstance(data, dict) else data
        if isinstance(text, str) and text.strip().startswith(self.options.end_markers):
            return self._end(text.strip()[:200])
        message = json.dumps(data, default=str)[:2000]
        return [
            self._event(EventKind.LOG, {"level": "info", "message": f"server-message: {message}"})
        ]

    def _end(self, reason: str) -> list[BotEvent]:
        if self.ended:
            return []
        self.ended = True
        kind = "agent_end_tool" if self.role is Side.AGENT else "user_hang_up"
        return [self._event(EventKind.END_CONVERSATION, {"kind": kind, "reason": reason})]


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _items(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _join(parts: list[str]) -> str:
    """Join streamed text chunks: sentence chunks need a space, word pieces carry their own."""
    text = ""
    for part in parts:
        if text and not text.endswith((" ", "\n")) and not part.startswith((" ", "\n")):
            text += " "
        text += part
    return text.strip()
