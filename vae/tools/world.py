"""One session's tool world: the DB a tool backend serves, and what each call gets back.

A call goes through three steps, each of which may answer it:

1. **checks** — an unknown tool is 404; arguments that are not a JSON object
   are 400; an argument the tool does not declare, a missing required one or
   one of the wrong declared type is 422, naming the argument;
2. **the scenario's answer** (``tool_responses``): the first rule of the tool
   whose ``when`` matches the arguments (:mod:`vae.tools.match`) and that has
   calls left (``times``) decides the status, the body (``result`` or
   ``error``), a ``delay_s`` before answering, and whether the tool's effects
   still run (``apply_effects``: by default only for a status below 400);
3. **the effects** (``tool_effects``, :mod:`vae.tools.jsondb`) on the DB; a
   failing effect changes nothing and answers 404 (no such record) or 422.

:meth:`ToolWorld.prepare` does 1 and 2 and returns a :class:`Pending` call (or
the finished answer); the server waits ``delay_s`` without blocking anyone,
then :meth:`ToolWorld.complete` runs the effects: the state changes when the
answer is given, as with a slow API. Nothing here does I/O, so the same code
answers over HTTP and over MCP, and two sessions never share a world.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

from vae.tools.jsondb import JsonDb
from vae.tools.match import arguments_mismatch
from vae.tools.spec import ToolDef, ToolSet

#: The longest ``delay_s`` a scenario may ask for.
MAX_DELAY_S = 60.0


@dataclass(frozen=True)
class Served:
    """What one call got: the HTTP status and JSON body, and what it did."""

    status: int
    body: Any
    #: "" for a success; otherwise what went wrong, in words.
    error: str = ""
    is_write: bool = False
    #: Index of the ``tool_responses`` rule that answered (None: none did).
    rule: int | None = None
    delay_s: float = 0.0
    #: Whether the tool's effects ran (and changed the DB when it writes).
    applied: bool = False
    #: The argument a refusal is about ("" for none).
    argument: str = ""

    @property
    def ok(self) -> bool:
        return self.status < 400


@dataclass(frozen=True)
class Pending:
    """A call past its checks, waiting ``delay_s`` before :meth:`ToolWorld.complete`."""

    tool: ToolDef
    arguments: dict[str, Any]
    rule: int | None
    delay_s: float


def _error(status: int, message: str, argument: str = "") -> Served:
    body: dict[str, Any] = {"error": message, "status": status}
    if argument:
        body["argument"] = argument
    return Served(status, body, message, argument=argument)


class ToolWorld:
    """The tools of one side and its DB, for one session."""

    def __init__(
        self,
        tools: ToolSet,
        initial_state: dict[str, Any] | None = None,
        initialization_actions: list[dict[str, Any]] | None = None,
    ) -> None:
        self.tools = tools
        self.db = JsonDb(initial_state)
        #: Problems of initialization actions that could not apply (kept for the record).
        self.init_problems: list[str] = []
        for action in initialization_actions or []:
            name = str(action.get("func_name", ""))
            args = action.get("arguments") or {}
            outcome = self.db.call(name, args if isinstance(args, dict) else {}, tools.effects)
            if outcome.error:
                self.init_problems.append(f"{name}: {outcome.error}")
        self._uses: dict[tuple[str, int], int] = {}

    @property
    def state(self) -> dict[str, Any]:
        return copy.deepcopy(self.db.state)

    def prepare(self, name: str, arguments: Any) -> Pending | Served:
        """Check a call and choose its answer; a :class:`Served` is a final refusal."""
        tool = self.tools.tools.get(name)
        if tool is None:
            return _error(404, f"unknown tool {name[:80]!r}")
        if not isinstance(arguments, dict):
            return _error(400, f"arguments must be a JSON object, got {type(arguments).__name__}")
        problems = tool.argument_problems(arguments)
        if problems:
            arg, why = problems[0]
            return _error(422, f"argument {arg[:80]!r}: {why}", arg[:80])
        for index, rule in enumerate(tool.responses):
            when = rule.get("when")
            if isinstance(when, dict) and arguments_mismatch(when, arguments)[0]:
                continue
            times = rule.get("times")
            used = self._uses.get((name, index), 0)
            if isinstance(times, int) and used >= times:
                continue
            self._uses[(name, index)] = used + 1
            delay = rule.get("delay_s") or 0.0
            delay = min(float(delay), MAX_DELAY_S) if isinstance(delay, int | float) else 0.0
            return Pending(tool, arguments, index, max(0.0, delay))
        return Pending(tool, arguments, None, 0.0)

    def complete(self, pending: Pending) -> Served:
        """Answer a prepared call: run its effects where its rule lets them, and say what."""
        tool, args = pending.tool, pending.arguments
        rule = tool.responses[pending.rule] if pending.rule is not None else {}
        status = rule.get("status", 200)
        status = status if isinstance(status, int) and 100 <= status <= 599 else 200
        apply = rule.get("apply_effects", status < 400)
        body: Any = {"ok": True}
        applied = False
        if apply:
            outcome = self.db.call(tool.name, args, self.tools.effects)
            if outcome.error:
                refused = _error(outcome.status, outcome.error)
                return replace(refused, is_write=tool.is_write, rule=pending.rule,
                               delay_s=pending.delay_s)  # fmt: skip
            body, applied = outcome.result, True
        if status >= 400:
            message = str(rule.get("error") or f"the scenario answers {tool.name} with {status}")
            body = rule.get("result", {"error": message, "status": status})
            return Served(
                status, body, message, tool.is_write, pending.rule, pending.delay_s, applied
            )
        body = rule.get("result", body)
        return Served(status, body, "", tool.is_write, pending.rule, pending.delay_s, applied)
