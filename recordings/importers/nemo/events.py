"""Event payloads for what the framework recorded only at the end of a scenario.

Payloads follow the recorded-event convention the scorer reads (see
``tests/factories.py``). Write actions keep the framework's own record as
``action`` (minus its ``side`` tag, which becomes the event's side), so
ACTION_MATCH compares exactly what the framework compared.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from vae.recordings.models import EventKind


def action_payloads(value: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(side, tool_call payload)`` per action of ``final_agent_response.json``.

    Two shapes: the pulled ``[{"actions": [{..., "side"}]}]`` and, for
    action-match domains, a plain list of order/response dicts (pushed).
    Raises ValueError when the document is neither a list nor an object.
    """
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise ValueError("neither a list nor an object")
    actions: list[Any] = []
    for item in value:
        if isinstance(item, dict) and isinstance(item.get("actions"), list):
            actions.extend(item["actions"])
        else:
            actions.append(item)
    for index, action in enumerate(actions):
        if not isinstance(action, dict):
            action = {"value": action}
        side = str(action.get("side") or "agent")
        side = side if side in ("agent", "user") else "agent"
        body = {k: v for k, v in action.items() if k != "side"}
        args = body.get("args", body.get("arguments"))
        yield (
            side,
            {
                "call_id": f"imported-{index}",
                "name": str(
                    body.get("type") or body.get("tool") or body.get("name") or "final_response"
                ),
                "arguments": args if isinstance(args, dict) else body,
                "result": body.get("result"),
                "error": "",
                "side": side,
                "is_write": True,
                "action": body,
                "source": "final_agent_response.json",
            },
        )


def usage_payloads(metrics: dict[str, Any]) -> Iterator[tuple[str, EventKind, dict[str, Any]]]:
    """Token usage spread over ``n_calls`` events per side (sums and call counts
    match the totals), and the framework's latency samples as metrics."""
    usage = metrics.get("token_usage")
    for side in ("agent", "user"):
        totals = usage.get(side) if isinstance(usage, dict) else None
        if not isinstance(totals, dict):
            continue
        calls, prompt, completion = (
            _int(totals.get(k)) for k in ("n_calls", "prompt", "completion")
        )
        for i in range(calls):
            yield (
                side,
                EventKind.TOKEN_USAGE,
                {
                    "model": "",
                    "prompt_tokens": prompt // calls + (i < prompt % calls),
                    "completion_tokens": completion // calls + (i < completion % calls),
                    "imported_from_totals": True,
                },
            )
    for item in metrics.get("latencies") or []:
        if isinstance(item, dict) and isinstance(item.get("latency_ms"), int | float):
            yield (
                "agent",
                EventKind.METRIC,
                {
                    "name": "nemo_response_latency",
                    "value": float(item["latency_ms"]) / 1e3,
                    "unit": "s",
                    "component": "imported",
                },
            )


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0
