"""The calls a session's tool backend served, as the scorer reads them back.

The bridge records each as a ``tool_backend_call`` event (bridge_service/tools)
and the backend's start as a ``tool_backend`` event. Both are evidence that
does not depend on what the agent says about itself: TOOL_CALLS checks these
calls, CLAIMED_NOT_DONE compares the agent's own reports with them. Payloads
are read tolerantly, like every event payload (``tests/factories.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class BackendCall:
    """One call the backend answered (a refusal included: the agent made it)."""

    tool: str
    #: The JSON object the agent sent; None when the body was no object.
    arguments: dict[str, Any] | None
    status: int
    result: Any
    error: str
    #: "http" or "mcp".
    transport: str
    #: Seconds from the session start to the call's arrival.
    t_s: float

    @property
    def ok(self) -> bool:
        return self.status < 400


def backend_call(payload: dict[str, Any], t_s: float) -> BackendCall:
    args = payload.get("arguments")
    status = payload.get("status")
    return BackendCall(
        tool=str(payload.get("tool", "")),
        arguments=args if isinstance(args, dict) else None,
        status=status if isinstance(status, int) and not isinstance(status, bool) else 0,
        result=payload.get("result"),
        error=str(payload.get("error") or ""),
        transport=str(payload.get("transport", "")),
        t_s=t_s,
    )
