"""The scenario keys of a tool backend: typed arguments, canned answers, call expectations.

Why a module of its own: a scenario that serves its agent's tools from a
backend vae owns (``tool_backend: true`` or ``vae run --tool-backend``;
docs/scenarios.md, "A tool backend") declares, beside ``tool_effects``:

- ``tool_argument_types`` and ``tool_responses`` inline in the agent's side
  section (:class:`ToolBackendKeys`; they reach the agent's bot in
  ``side_config_json`` with the other tool keys, and the backend reads them);
- ``tool_call_expectations`` at the top (:class:`ToolCallExpectation`), which
  the scorer checks as the ``TOOL_CALLS`` signal.

The schema generator reads these dataclasses; :func:`cross_check` adds what a
schema cannot say (a tool the side does not declare, a pattern that does not
compile). The meaning of a matcher at run time is ``vae/tools/match.py``
(the store may not import the contract, so the few shape rules are stated
here again; a test holds the two equal).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Literal

ArgumentType = Literal["string", "integer", "number", "boolean", "object", "array", "date"]
#: A tool name a backend can serve (one URL path segment, an MCP tool name).
SERVED_NAME = r"^[A-Za-z0-9_.-]{1,64}$"
#: Key sets that make a mapping a matcher instead of a literal value.
MATCHERS = ({"min"}, {"max"}, {"min", "max"}, {"regex"}, {"date"}, {"eq"})


@dataclass
class ToolResponse:
    """One answer rule of a tool (``tool_responses.TOOL[i]``): the first that fits answers."""

    when: dict[str, Any] | None = None
    status: int = field(default=200, metadata={"minimum": 100, "maximum": 599})
    result: Any = None
    error: str = ""
    delay_s: float = field(default=0.0, metadata={"minimum": 0, "maximum": 60})
    apply_effects: bool | None = None
    times: int | None = field(default=None, metadata={"minimum": 1})


@dataclass
class ToolBackendKeys:
    """Agent side keys the tool backend reads besides ``tool_effects``."""

    tool_argument_types: dict[str, dict[str, ArgumentType]] = field(default_factory=dict)
    tool_responses: dict[str, list[ToolResponse]] = field(default_factory=dict)


@dataclass
class ToolCallExpectation:
    """One expectation on the agent's tool calls (TOOL_CALLS)."""

    tool: str
    called: bool = True
    arguments: dict[str, Any] | None = None
    match: Literal["subset", "exact"] = "subset"
    times: int | dict[str, int] | None = None
    after: str | None = None
    before: str | None = None
    after_user_turn: int | None = field(default=None, metadata={"minimum": 1})
    before_user_turn: int | None = field(default=None, metadata={"minimum": 1})
    message: str = ""


CLASS_DOCS: dict[str, str] = {
    "ToolResponse": "How the tool backend answers a call of this tool: the first rule whose "
    "`when` matches the arguments (and that has `times` left) decides.",
    "ToolCallExpectation": "What the agent's tool calls must show (TOOL_CALLS): called or "
    "not, with which arguments, how many times, in which order.",
}

FIELD_DOCS: dict[str, str] = {
    "Scenario.tool_backend": "Serve the agent's tools from a backend vae owns, one per session "
    "(HTTP `POST /tools/NAME`, OpenAPI, MCP); its DB at the end is the agent's final state. "
    "`vae run --tool-backend` turns it on for every scenario.",
    "Scenario.tool_call_expectations": "Checks on the agent's tool calls (TOOL_CALLS): the "
    "tool backend's recorded calls when one ran, else the calls the agent reported.",
    "ToolBackendKeys.tool_argument_types": "`{tool: {argument: type}}`: string, integer, "
    "number, boolean, object, array or date (an ISO date); the tool backend refuses "
    "(422) a value of another type.",
    "ToolBackendKeys.tool_responses": "`{tool: [rule, ...]}`: what the tool backend answers "
    "instead of (or besides) the tool's effects: a canned result, an error status, a delay.",
    "ToolResponse.when": "Argument values (or matchers `{min, max}`, `{regex}`, `{date}`) the "
    "call must have for this rule to answer it; unset: any call.",
    "ToolResponse.status": "HTTP status of the answer (MCP: `isError` when 400 or more, with "
    "the status in the text).",
    "ToolResponse.result": "The JSON body answered (unset: the effects' result, or for an "
    "error status `{error, status}`).",
    "ToolResponse.error": "The error message of an error status.",
    "ToolResponse.delay_s": "Seconds the backend waits before answering (at most 60).",
    "ToolResponse.apply_effects": "Whether the tool's effects still change the DB (default: "
    "only when `status` is below 400).",
    "ToolResponse.times": "Answer only this many matching calls, then leave them to the next "
    "rule (e.g. fail once, then succeed).",
    "ToolCallExpectation.tool": "The tool (required).",
    "ToolCallExpectation.called": "false: the tool (with `arguments`, if given) must never "
    "be called.",
    "ToolCallExpectation.arguments": "Arguments some call must have: values, or matchers in "
    "place of values (`{min, max}`, `{regex}`, `{date}`, `{eq}`).",
    "ToolCallExpectation.match": "`subset`: other arguments may be there too; `exact`: no others.",
    "ToolCallExpectation.times": "How many calls (matching `arguments`): a number, or "
    "`{min, max}`.",
    "ToolCallExpectation.after": "A tool that must have been called before the matching call.",
    "ToolCallExpectation.before": "A tool the matching call must come before (every call of it).",
    "ToolCallExpectation.after_user_turn": "The matching call comes after the caller's turn "
    "number N (1-based) has been said.",
    "ToolCallExpectation.before_user_turn": "The matching call comes before the caller's turn "
    "number N has been said.",
    "ToolCallExpectation.message": "Shown with the verdict.",
}


def _matcher_problems(where: str, value: Any) -> list[tuple[str, str]]:
    """Problems of matchers inside an expected value (nested mappings and lists included)."""
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _matcher_problems(f"{where}[{i}]", v)]
    if not isinstance(value, dict):
        return []
    if set(value) not in MATCHERS:
        return [p for k, v in value.items() for p in _matcher_problems(f"{where}.{k}", v)]
    for key in ("min", "max"):
        bound = value.get(key)
        if key in value and (isinstance(bound, bool) or not isinstance(bound, int | float)):
            return [(f"{where}.{key}", "must be a number")]
    if "regex" in value:
        if not isinstance(value["regex"], str):
            return [(f"{where}.regex", "must be a string")]
        try:
            re.compile(value["regex"])
        except re.error as exc:
            return [(f"{where}.regex", f"does not compile: {exc}")]
    if "date" in value and value["date"] is not True:
        try:
            dt.date.fromisoformat(str(value["date"]))
        except ValueError:
            return [(f"{where}.date", "must be an ISO date (YYYY-MM-DD) or true")]
    return []


def _arguments_problems(where: str, value: Any) -> list[tuple[str, str]]:
    """Problems of an arguments mapping (never a matcher itself: its keys are argument names)."""
    if not isinstance(value, dict):
        return []
    return [p for k, v in value.items() for p in _matcher_problems(f"{where}.{k}", v)]


def cross_check(data: dict[str, Any]) -> list[tuple[str, str]]:
    """Problems the schema cannot state, as ``(field name, problem)``; empty when fine."""
    agent = data.get("agent") if isinstance(data.get("agent"), dict) else {}
    flat = data.get("agent_resources")
    resources = flat if isinstance(flat, dict) else (agent or {}).get("resources") or {}
    declared = dict(resources.get("tools") or {})
    problems: list[tuple[str, str]] = []
    for key in ("tool_argument_types", "tool_responses"):
        for tool in (agent or {}).get(key) or {}:
            if tool not in declared:
                problems.append((f"agent.{key}.{tool}", "not a tool of agent.resources.tools"))
    for tool, kinds in ((agent or {}).get("tool_argument_types") or {}).items():
        for arg in kinds or {}:
            if tool in declared and arg not in (declared[tool] or {}):
                why = f"not an argument of {tool} in agent.resources.tools"
                problems.append((f"agent.tool_argument_types.{tool}.{arg}", why))
    for tool, rules in ((agent or {}).get("tool_responses") or {}).items():
        for i, rule in enumerate(rules or []):
            where = f"agent.tool_responses.{tool}[{i}].when"
            problems += _arguments_problems(where, rule.get("when"))
    if data.get("tool_backend"):
        if not declared:
            problems.append(("tool_backend", "serves agent.resources.tools: declare the tools"))
        for tool in declared:
            if not re.match(SERVED_NAME, str(tool)) or tool in (".", ".."):
                why = "a served tool name is 1-64 letters, digits, '_', '.' or '-'"
                problems.append((f"agent.resources.tools.{tool}", why))
    for i, item in enumerate(data.get("tool_call_expectations") or []):
        where = f"tool_call_expectations[{i}]"
        for key in ("tool", "after", "before"):
            name = item.get(key)
            if declared and name is not None and name not in declared:
                problems.append((f"{where}.{key}", f"{name!r} is not a tool of the agent"))
        problems += _arguments_problems(f"{where}.arguments", item.get("arguments"))
        times = item.get("times")
        if isinstance(times, dict) and (not times or set(times) - {"min", "max"}):
            problems.append((f"{where}.times", "a number, or {min, max}"))
        if item.get("called") is False and (times is not None or item.get("after")
                                            or item.get("before")):  # fmt: skip
            problems.append((f"{where}.called", "a tool never called has no times or order"))
    return problems
