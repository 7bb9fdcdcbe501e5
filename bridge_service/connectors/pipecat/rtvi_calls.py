"""Tool calls in RTVI: a function call's messages joined into one event, and write actions.

Apart from :mod:`.rtvi` (speech, transcripts, metrics, endings) because this
follows how bots report what they did, which changes on its own: pipecat's
``llm-function-call*`` messages (name and arguments in the early ones, the
result when the call stops), the established framework's ``action-applied``
server messages, and the ``actions`` of ``get_scenario_summary`` — recorded
as write tool calls only when none were announced live, so a write is never
counted twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vae.bridge_service.connectors.base import BotEvent
from vae.recordings.models import EventKind, Side

#: Builds an event stamped with the translator's clock.
MakeEvent = Callable[[EventKind, dict[str, Any]], BotEvent]


@dataclass
class _Call:
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)


class RtviCalls:
    """Stateful: each function call's parts until it stops, and the write actions seen live."""

    def __init__(self, role: Side, write_tools: frozenset[str], event: MakeEvent) -> None:
        self.role = role
        self.write_tools = write_tools
        self._event = event
        self._calls: dict[str, _Call] = {}
        self.live_writes = 0

    def function_call(self, kind: str, body: dict[str, Any]) -> BotEvent | None:
        """The tool call once it stops (``llm-function-call-stopped``), else None."""
        call_id = str(body.get("tool_call_id", "") or body.get("function_name", "") or "call")
        call = self._calls.setdefault(call_id, _Call())
        call.name = str(body.get("function_name") or call.name)
        args = body.get("args", body.get("arguments"))
        if isinstance(args, dict):
            call.arguments = dict(args)
        if kind != "llm-function-call-stopped":
            return None
        del self._calls[call_id]
        error = "cancelled" if body.get("cancelled") else ""
        return self._event(
            EventKind.TOOL_CALL,
            {
                "call_id": call_id,
                "name": call.name,
                "arguments": call.arguments,
                "result": body.get("result"),
                "error": error,
                "side": str(self.role),
                "is_write": call.name in self.write_tools,
            },
        )

    def applied(self, action: dict[str, Any]) -> BotEvent:
        """A write the bot announced live (``server-message`` ``action-applied``)."""
        self.live_writes += 1
        return self.action_event(action, f"action-{self.live_writes}", "action-applied")

    def action_event(self, action: dict[str, Any], call_id: str, source: str) -> BotEvent:
        """A write action the bot recorded (``{"type", "args", "result", "side"?}``)."""
        name = str(action.get("type") or action.get("name") or "action")
        args = action.get("args", action.get("arguments", {}))
        payload = {
            "call_id": call_id,
            "name": name,
            "arguments": args if isinstance(args, dict) else {"value": args},
            "result": action.get("result"),
            "error": "",
            "side": str(action.get("side") or self.role),
            "is_write": True,
            "action": {k: v for k, v in action.items() if k != "side"},
            "source": source,
        }
        return self._event(EventKind.TOOL_CALL, payload)

    def summary_actions(self, summary: dict[str, Any]) -> list[BotEvent]:
        """The summary's actions as write tool calls, unless they were seen live."""
        if self.live_writes:
            return []
        actions = summary.get("actions")
        items = actions if isinstance(actions, list) else []
        return [
            self.action_event(a, f"summary-{i}", "get_scenario_summary")
            for i, a in enumerate(items)
            if isinstance(a, dict)
        ]
