"""A sync hook for the dual-sided test scenario (imported by the bridge by name)."""

from __future__ import annotations

from typing import Any


def hook(agent_db: dict[str, Any], user_db: dict[str, Any], action: dict[str, Any]) -> Any:
    """When the agent suspends a line, the caller's phone loses signal."""
    if action["name"] == "suspend_line":
        return {"user": {"phone": {"signal": "none"}}, "agent": {"suspended": True}}
    if action["name"] == "explode":
        raise ValueError("hook bug")
    return None
