"""The reference agent calling its tools through the session's tool backend (``--tool-backend``).

By default the reference agent runs its tools on its own JSON DB. With
``vae bot agent --tool-backend`` it does what a real agent would do with a
backend vae owns: each call is an HTTP ``POST {http_url}/tools/NAME``
(``SessionStart.tool_backend``; :mod:`vae.tools.client`), the backend's
answer is the call's result (an error status is the call's error), and the
agent reports the call as usual (a ``ToolCall`` event). Its own DB stays
untouched: the world it changes is the backend's, whose state the bridge
records as the agent's final state.

The switch is per brain (:func:`through_backend`), held in a context
variable, so a bot process can run brains either way. A session without a
tool backend falls back to the local DB and says so in its log.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from vae.tools.client import call_tool
from vae.tools.jsondb import MUTATING, ToolOutcome


class _Conversation(Protocol):
    """What this module needs of a conversation (vae.bots.brains.conversation imports us)."""

    @property
    def info(self) -> Any: ...

    async def log(self, message: str) -> None: ...


C = TypeVar("C", bound=_Conversation)

#: Set by :func:`through_backend` for the brain's task (and the tasks it starts).
_USE_BACKEND = contextvars.ContextVar("vae_use_backend", default=False)


def through_backend(
    brain: Callable[[C], Awaitable[None]], *, say_when_missing: bool = True
) -> Callable[[C], Awaitable[None]]:
    """``brain``, with its tool calls sent to the session's tool backend when it has one.

    ``say_when_missing``: log, in a session without a backend, that the tools run locally.
    """

    async def wrapped(conv: C) -> None:
        token = _USE_BACKEND.set(True)
        try:
            if say_when_missing and not conv.info.tool_backend.get("http_url"):
                await conv.log("--tool-backend: this session has no tool backend (vae run "
                               "--tool-backend); tools run on the local DB")  # fmt: skip
            await brain(conv)
        finally:
            _USE_BACKEND.reset(token)

    return wrapped


async def backend_call(
    tool_backend: dict[str, str],
    name: str,
    args: dict[str, Any],
    effects: dict[str, list[dict[str, Any]]],
) -> ToolOutcome | None:
    """The call answered by the backend; None when this brain runs its tools locally."""
    url = tool_backend.get("http_url", "")
    if not _USE_BACKEND.get() or not url:
        return None
    is_write = any(step.get("op") in MUTATING for step in effects.get(name, []))
    try:
        status, body = await asyncio.to_thread(call_tool, url, name, args)
    except OSError as exc:
        return ToolOutcome(None, f"the tool backend is unreachable: {exc}", is_write, 503)
    if status >= 400:
        message = body.get("error") if isinstance(body, dict) else None
        return ToolOutcome(None, f"HTTP {status}: {message or body}", is_write, status)
    return ToolOutcome(body, "", is_write, status)
