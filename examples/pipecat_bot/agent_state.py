"""The example bot's scenario state, and the tools it calls.

What the NeMo framework's client messages set and read over RTVI
(``update_system_prompt``, ``apply_initialization``, ``get_scenario_summary``,
``get_context_history``, and vae's ``set_tool_backend``) is kept by
:class:`Agent`, one per session; ``bot.py`` answers each client message with
:meth:`Agent.handle`. Its write tool runs on its own DB, or, with
``--tool-backend``, as a real HTTP call to the session's tool backend
(:func:`call_backend`: POST ``{http_url}/tools/NAME``, the backend's answer is
the call's result) — all a real agent changes to be tested against a backend
vae owns is the base URL of its tools. Only the standard library here.
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from typing import Any


class Agent:
    """The bot's scenario state: prompt, DB, recorded actions, context."""

    def __init__(self) -> None:
        self.prompt = ""
        self.tools: dict[str, Any] = {}
        self.db: dict[str, Any] = {}
        self.actions: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []
        #: Bumped per scenario, so the pipeline can serve one session after another.
        self.generation = 0
        #: The session's tool backend (``set_tool_backend``); "" until told.
        self.tools_url = ""

    def handle(self, kind: str, data: Any) -> Any:
        body = data if isinstance(data, dict) else {}
        if kind == "update_system_prompt":
            self.prompt = str(body.get("prompt", ""))
            tools = body.get("tools", "{}")
            self.tools = json.loads(tools) if isinstance(tools, str) else dict(tools or {})
            self.db, self.actions, self.tools_url = {}, [], ""
            self.generation += 1
            self.messages = [{"role": "system", "content": self.prompt}]
            return {"ok": True, "tools": sorted(self.tools)}
        if kind == "set_tool_backend":
            self.tools_url = str(body.get("http_url", ""))
            return {"ok": True}
        if kind == "apply_initialization":
            self.db.update(body.get("shared_state_init") or {})
            return {"ok": True}
        if kind == "get_scenario_summary":
            canonical = json.dumps(self.db, sort_keys=True, separators=(",", ":"))
            summary: dict[str, Any] = {
                "actions": self.actions,
                "db_hash": hashlib.sha256(canonical.encode()).hexdigest(),
            }
            if body.get("include_db"):
                summary["db"] = self.db
            return summary
        if kind == "get_context_history":
            return self.messages
        raise ValueError(f"unknown client message {kind!r}")

    def write(self, args: dict[str, Any]) -> Any:
        """The write tool on the bot's own DB: the booking is added to the scenario's."""
        bookings = self.db.setdefault("bookings", [])
        # A scenario's DB may keep bookings as a mapping: then the write is kept beside it.
        is_list = isinstance(bookings, list)
        target = bookings if is_list else self.db.setdefault("writes", [])
        target.append(args)
        return {"ok": True}

    def call_backend(self, tool: str, args: dict[str, Any]) -> Any:
        """The write tool as an API call: the backend's world changes, not this bot's DB."""
        result, error = call_backend(self.tools_url, tool, args)
        return {"error": error} if error else result


def call_backend(base_url: str, tool: str, args: dict[str, Any]) -> tuple[Any, str]:
    """POST one call to the tool backend: (result, error) — what any agent's HTTP tool does."""
    request = urllib.request.Request(
        f"{base_url}/tools/{tool}",
        data=json.dumps(args).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"null"), ""
    except urllib.error.HTTPError as exc:
        return None, f"HTTP {exc.code}: {exc.read().decode(errors='replace')}"
    except OSError as exc:
        return None, f"the tool backend is unreachable: {exc}"
