"""What a LiveKit agent's session events mean to vae: recorded events.

=============================  ===============================================
``AgentSessionEvent``           recorded as
=============================  ===============================================
``user_input_transcribed``      transcript, kind ``heard`` (what its STT heard)
``conversation_item_added``,    transcript, kind ``spoken`` (what it said; with
assistant message               ``interrupted``), its metrics (``llm_node_ttft``,
                                ``tts_node_ttfb``, ``e2e_latency``) as metrics
... user message                its ``end_of_turn_delay`` and
                                ``transcription_delay`` as metrics
``agent_state_changed``         a log (``agent_state``); ``speaking`` starts and
                                ends the agent's speech (speech_started/stopped,
                                source ``tts``)
``user_state_changed``          the caller's speech as the agent's VAD saw it
                                (speech_started/stopped, source ``vad``)
``function_tools_executed``     one tool_call per call, with its arguments and
                                output; a write unless ``write_tools`` says
                                otherwise (end tools never are); an end tool
                                ends the call (end_conversation)
``session_usage_updated``       token_usage: what the LLM used since the last
                                update (livekit reports running totals)
``eot_prediction``              metrics ``end_of_turn_probability`` (with the
                                threshold) and ``end_of_turn_inference`` (s)
``error``                       an error log
anything else                   a log (tool progress and debug messages are
                                dropped: the calls are recorded when they end)
=============================  ===============================================
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from vae.bridge_service.connectors.base import BotEvent
from vae.bridge_service.connectors.livekit.options import LivekitOptions
from vae.recordings.models import EventKind, Side

_DROPPED = frozenset({"tool_execution_updated", "function_tools_started", "debug_message"})
_ASSISTANT_METRICS = ("llm_node_ttft", "tts_node_ttfb", "e2e_latency", "llm_node_ttfs")
_USER_METRICS = ("end_of_turn_delay", "transcription_delay", "on_user_turn_completed_delay")


def _seconds(duration: Any) -> float:
    return float(duration.seconds) + float(duration.nanos) / 1e9


class EventTranslator:
    """Stateful: running token totals, who is speaking, whether the call has ended."""

    def __init__(
        self, role: Side, options: LivekitOptions, pb: Any, out_offset: Callable[[], int]
    ) -> None:
        self.role = role
        self.options = options
        self._pb = pb
        self._offset = out_offset
        self._tokens: dict[tuple[str, str], tuple[int, int]] = {}
        self.speaking = False
        self.ended = False
        #: Assistant messages, in order (a text session's turns come from these).
        self.said: list[str] = []

    def _event(self, kind: EventKind, payload: dict[str, Any]) -> BotEvent:
        return BotEvent(kind, time.time_ns(), payload)

    def translate(self, event: Any) -> list[BotEvent]:
        kind = event.WhichOneof("event")
        if kind is None or kind in _DROPPED:
            return []
        body = getattr(event, kind)
        handler = getattr(self, f"_{kind}", None)
        if handler is not None:
            out: list[BotEvent] = handler(body)
            return out
        text = str(body).replace("\n", " ")[:500]
        return [self._event(EventKind.LOG, {"level": "info", "message": f"livekit {kind}: {text}"})]

    def _user_input_transcribed(self, body: Any) -> list[BotEvent]:
        payload = {"kind": "heard", "text": body.transcript, "is_final": body.is_final}
        return [self._event(EventKind.TRANSCRIPT, payload)]

    def _conversation_item_added(self, body: Any) -> list[BotEvent]:
        if body.item.WhichOneof("item") != "message":
            what = body.item.WhichOneof("item") or "item"
            return [self._event(EventKind.LOG, {"level": "info", "message": f"livekit {what}"})]
        message = body.item.message
        role = self._pb.ChatRole.Name(message.role)
        text = " ".join(c.text for c in message.content if c.WhichOneof("payload") == "text")
        out: list[BotEvent] = []
        names = _USER_METRICS if role == "USER" else _ASSISTANT_METRICS
        for name in names:
            if message.metrics.HasField(name):
                value = float(getattr(message.metrics, name))
                payload = {"name": name, "value": value, "unit": "s", "component": "livekit"}
                out.append(self._event(EventKind.METRIC, payload))
        if role == "ASSISTANT" and text.strip():
            self.said.append(text.strip())
            payload = {
                "kind": "spoken",
                "text": text.strip(),
                "is_final": True,
                "source": "conversation_item",
                "interrupted": message.interrupted,
            }
            out.insert(0, self._event(EventKind.TRANSCRIPT, payload))
        return out

    def _agent_state_changed(self, body: Any) -> list[BotEvent]:
        old = self._pb.AgentState.Name(body.old_state).removeprefix("AS_").lower()
        new = self._pb.AgentState.Name(body.new_state).removeprefix("AS_").lower()
        message = f"agent state: {old} -> {new}"
        out = [
            self._event(EventKind.LOG, {"level": "info", "message": message, "agent_state": new})
        ]
        if (new == "speaking") != self.speaking:
            self.speaking = new == "speaking"
            kind = EventKind.SPEECH_STARTED if self.speaking else EventKind.SPEECH_STOPPED
            out.append(self._event(kind, {"source": "tts", "sample_offset": self._offset()}))
        return out

    def _user_state_changed(self, body: Any) -> list[BotEvent]:
        new = self._pb.UserState.Name(body.new_state)
        old = self._pb.UserState.Name(body.old_state)
        if new == "US_SPEAKING":
            kind = EventKind.SPEECH_STARTED
        elif old == "US_SPEAKING":
            kind = EventKind.SPEECH_STOPPED
        else:
            return []
        return [self._event(kind, {"source": "vad", "sample_offset": -1})]

    def _function_tools_executed(self, body: Any) -> list[BotEvent]:
        outputs = {o.call_id: o for o in body.function_call_outputs}
        out: list[BotEvent] = []
        ends = []
        for call in body.function_calls:
            try:
                arguments = json.loads(call.arguments or "{}")
                problem = ""
            except json.JSONDecodeError as exc:
                arguments, problem = {"raw": call.arguments[:2000]}, f"arguments: {exc}"
            if not isinstance(arguments, dict):
                arguments = {"value": arguments}
            output = outputs.get(call.call_id)
            error = output.output if output is not None and output.is_error else ""
            payload = {
                "call_id": call.call_id,
                "name": call.name,
                "arguments": arguments,
                "result": None if output is None or output.is_error else output.output,
                "error": error,
                "side": str(self.role),
                "is_write": self.options.is_write(call.name),
            }
            out.append(BotEvent(EventKind.TOOL_CALL, time.time_ns(), payload, problem))
            if call.name in self.options.end_tools and not error:
                ends.append(call.name)
        if ends and not self.ended:
            self.ended = True
            kind = "agent_end_tool" if self.role is Side.AGENT else "user_hang_up"
            payload = {"kind": kind, "reason": f"end tool {ends[0]}"}
            out.append(self._event(EventKind.END_CONVERSATION, payload))
        return out

    def _session_usage_updated(self, body: Any) -> list[BotEvent]:
        out: list[BotEvent] = []
        for usage in body.usage.model_usage:
            if usage.WhichOneof("usage") != "llm":
                continue
            llm = usage.llm
            key = (llm.provider, llm.model)
            before = self._tokens.get(key, (0, 0))
            now = (llm.input_tokens, llm.output_tokens)
            if now == before:
                continue
            self._tokens[key] = now
            payload = {"model": llm.model, "provider": llm.provider,
                       "prompt_tokens": max(0, now[0] - before[0]),
                       "completion_tokens": max(0, now[1] - before[1])}  # fmt: skip
            out.append(self._event(EventKind.TOKEN_USAGE, payload))
        return out

    def _eot_prediction(self, body: Any) -> list[BotEvent]:
        return [
            self._event(EventKind.METRIC, {"name": "end_of_turn_probability",
                        "value": float(body.probability), "unit": "probability",
                        "component": "turn_detector", "threshold": float(body.threshold)}),
            self._event(EventKind.METRIC, {"name": "end_of_turn_inference",
                        "value": _seconds(body.inference_duration), "unit": "s",
                        "component": "turn_detector"}),
        ]  # fmt: skip

    def _error(self, body: Any) -> list[BotEvent]:
        message = f"livekit error: {body.message}"[:2000]
        return [self._event(EventKind.LOG, {"level": "error", "message": message})]
