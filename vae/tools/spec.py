"""A side's tools as one scenario declares them: names, arguments, types, effects, answers.

Read from the plain data a bot or the bridge already has: the side's
``resources.tools`` (``{tool: {argument: description}}``) and its scenario
keys (``tool_effects``, ``tool_argument_types``, ``tool_responses``:
docs/scenarios.md, "A tool backend"). :class:`ToolSet` is what the tool
backend serves and documents (HTTP routes, OpenAPI, MCP) and what
:mod:`vae.tools.world` checks calls against:

- the arguments a tool takes are the ones ``resources.tools`` declares; any
  other is refused;
- an argument the tool's effects use (a path segment ``{NAME}``, a value
  ``$args.NAME``) is required;
- ``tool_argument_types`` gives an argument a JSON type (``string``,
  ``integer``, ``number``, ``boolean``, ``object``, ``array``) or ``date``
  (an ISO date string); untyped arguments take any JSON value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from vae.tools.match import parse_date, show

#: Argument types a scenario may declare, and the JSON Schema each stands for.
TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "integer": {"type": "integer"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "object": {"type": "object"},
    "array": {"type": "array"},
    "date": {"type": "string", "format": "date"},
}
#: A tool name the backend can serve: one URL path segment, an MCP tool name.
NAME_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"
_NAME = re.compile(NAME_PATTERN)
_PLACEHOLDER = re.compile(r"^\{(.+)\}$")


def name_problem(name: str) -> str:
    """Why ``name`` cannot be served as a tool ("" when it can)."""
    if _NAME.match(name) and name not in (".", ".."):
        return ""
    return "a served tool name is 1-64 letters, digits, '_', '.' or '-'"


def type_problem(kind: str, value: Any) -> str:
    """Why ``value`` is not of the declared type ``kind`` ("" when it is)."""
    ok = {
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
        "date": parse_date(value) is not None and len(str(value).strip()) == 10,
    }.get(kind, True)
    if ok:
        return ""
    what = "an ISO date (YYYY-MM-DD)" if kind == "date" else f"of type {kind}"
    return f"must be {what}, got {show(value, 40)}"


def _used_arguments(value: Any, out: set[str]) -> None:
    if isinstance(value, str) and value.startswith("$args."):
        out.add(value[len("$args.") :])
    elif isinstance(value, dict):
        for item in value.values():
            _used_arguments(item, out)
    elif isinstance(value, list):
        for item in value:
            _used_arguments(item, out)


def required_arguments(effects: list[dict[str, Any]]) -> tuple[str, ...]:
    """The arguments a tool's effects read (path ``{NAME}``, value ``$args.NAME``)."""
    used: set[str] = set()
    for step in effects:
        for part in str(step.get("path", "")).split("."):
            found = _PLACEHOLDER.match(part)
            if found:
                used.add(found.group(1))
        _used_arguments(step.get("value"), used)
    return tuple(sorted(used))


@dataclass(frozen=True)
class ToolDef:
    """One tool: what it takes, what it does (effects), what it answers (responses)."""

    name: str
    #: argument -> description, as ``resources.tools`` declares it.
    arguments: dict[str, str] = field(default_factory=dict)
    #: argument -> declared type (:data:`TYPES`).
    types: dict[str, str] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    effects: list[dict[str, Any]] = field(default_factory=list)
    #: ``tool_responses`` rules, tried in order.
    responses: list[dict[str, Any]] = field(default_factory=list)

    @property
    def is_write(self) -> bool:
        return any(step.get("op") not in (None, "get") for step in self.effects)

    def argument_problems(self, args: dict[str, Any]) -> list[tuple[str, str]]:
        """``(argument, problem)`` for every unknown, missing or mistyped argument."""
        out = [(k, "not an argument of this tool") for k in args if k not in self.arguments]
        out += [(k, "required") for k in self.required if k not in args]
        for key, kind in self.types.items():
            if key in args and (why := type_problem(kind, args[key])):
                out.append((key, why))
        return out

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments (OpenAPI request body, MCP inputSchema)."""
        props: dict[str, Any] = {}
        for arg, description in self.arguments.items():
            prop = dict(TYPES.get(self.types.get(arg, ""), {}))
            if description:
                prop["description"] = description
            props[arg] = prop
        schema: dict[str, Any] = {
            "type": "object",
            "properties": props,
            "additionalProperties": False,
        }
        if self.required:
            schema["required"] = list(self.required)
        return schema


@dataclass(frozen=True)
class ToolSet:
    """A side's tools, by name."""

    tools: dict[str, ToolDef] = field(default_factory=dict)
    #: ``tool_effects`` as given (initialization actions run through it too).
    effects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @classmethod
    def from_side(cls, tools: dict[str, Any], side_config: dict[str, Any]) -> ToolSet:
        """The tools of ``resources.tools`` with the side's tool keys (``side_config``)."""
        effects = _mapping(side_config.get("tool_effects"))
        types = _mapping(side_config.get("tool_argument_types"))
        responses = _mapping(side_config.get("tool_responses"))
        out: dict[str, ToolDef] = {}
        for name, args in tools.items():
            steps = [s for s in effects.get(name) or [] if isinstance(s, dict)]
            rules = [r for r in responses.get(name) or [] if isinstance(r, dict)]
            out[name] = ToolDef(
                name=name,
                arguments={str(k): str(v or "") for k, v in _mapping(args).items()},
                types={str(k): str(v) for k, v in _mapping(types.get(name)).items()},
                required=required_arguments(steps),
                effects=steps,
                responses=rules,
            )
        return cls(out, {k: list(v) for k, v in effects.items() if isinstance(v, list)})


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
