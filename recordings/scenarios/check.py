"""Every problem of a scenario document, in one pass, against the generated schema.

Why not stop at the first error: fixing a file one error per edit-run cycle
is slow, and a folder with two broken files should say so. :func:`check`
walks the plain data against :func:`~vae.recordings.scenarios.schema.scenario_schema`
and collects an :class:`Issue` per problem: the path of the field (so the
caller can turn it into a file position), what is wrong, and for a misspelt
key or value the closest known one ("did you mean"). Then come the checks a
schema cannot express (a scripted tool call naming a tool the side does not
have, a mutating tool effect without a path). The store, the bridge and the
CLI all validate through here.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from typing import Any

from vae.recordings.scenarios.caller import cross_check as caller_check
from vae.recordings.scenarios.line import FIELDS, LineConditions, burst_problem
from vae.recordings.scenarios.tools import cross_check as tools_check

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Issue:
    path: Path
    problem: str
    #: The position to show is the key's own (an unknown key), not its value's.
    at_key: bool = False

    @property
    def field(self) -> str:
        return field_name(self.path)


def field_name(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<document>"


def parse_field(name: str) -> Path:
    """The path of a field name such as ``agent.script[2].say`` (inverse of field_name)."""
    out: list[str | int] = []
    for token in re.findall(r"[^.\[\]]+|\[\d+\]", name):
        out.append(int(token[1:-1]) if token.startswith("[") else token)
    return tuple(out)


@functools.cache
def _schema() -> dict[str, Any]:
    from vae.recordings.scenarios.schema import scenario_schema

    return scenario_schema()


def suggest(word: str, choices: Any, cutoff: float = 0.6) -> str:
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=cutoff)
    return f"; did you mean {close[0]!r}?" if close else ""


_JSON_TYPES = {
    "string": "a string",
    "boolean": "true or false",
    "integer": "an integer",
    "number": "a number",
    "object": "a mapping",
    "array": "a list",
    "null": "empty",
}


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _type_ok(value: Any, schema: dict[str, Any]) -> bool:
    expected = schema.get("type")
    if expected is None:
        return True
    kinds = expected if isinstance(expected, list) else [expected]
    actual = _type_of(value)
    return actual in kinds or (actual == "integer" and "number" in kinds)


class _Walker:
    def __init__(self, root: dict[str, Any]) -> None:
        self.defs = root.get("$defs", {})
        self.issues: list[Issue] = []

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = self.defs[schema["$ref"].rsplit("/", 1)[-1]]
        return schema

    def add(self, path: Path, problem: str, at_key: bool = False) -> None:
        self.issues.append(Issue(path, problem, at_key))

    def walk(self, value: Any, schema: dict[str, Any], path: Path) -> None:
        schema = self.resolve(schema)
        branches = [self.resolve(b) for b in schema.get("anyOf", []) if "required" not in b]
        if branches:
            fitting = [b for b in branches if _type_ok(value, b)]
            if not fitting:
                kinds = " or ".join(_describe(b) for b in branches if b.get("type") != "null")
                got = _JSON_TYPES.get(_type_of(value), _type_of(value))
                self.add(path, f"must be {kinds}, got {got}")
                return
            self.walk(value, fitting[0], path)
            return
        if not _type_ok(value, schema):
            got = _JSON_TYPES.get(_type_of(value), _type_of(value))
            self.add(path, f"must be {_describe(schema)}, got {got}")
            return
        if "enum" in schema and value not in schema["enum"]:
            enum = schema["enum"]
            canonical = [e for e in enum if not (isinstance(e, str) and e.islower())] or enum
            shown = ", ".join(str(e) for e in canonical)
            self.add(path, f"{value!r} is not one of: {shown}{suggest(value, schema['enum'])}")
            return
        kind = _type_of(value)
        if kind in ("integer", "number"):
            self.number(value, schema, path)
        elif kind == "string":
            if len(value) < schema.get("minLength", 0) or (
                "pattern" in schema and not re.search(schema["pattern"], value)
            ):
                self.add(path, _string_problem(path, value))
        elif kind == "object":
            self.mapping(value, schema, path)
        elif kind == "array" and "items" in schema:
            for i, item in enumerate(value):
                self.walk(item, schema["items"], (*path, i))

    def number(self, value: float, schema: dict[str, Any], path: Path) -> None:
        if "minimum" in schema and value < schema["minimum"]:
            self.add(path, f"must be at least {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            self.add(path, f"must be at most {schema['maximum']}, got {value}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            self.add(path, f"must be more than {schema['exclusiveMinimum']}, got {value}")

    def mapping(self, value: dict[str, Any], schema: dict[str, Any], path: Path) -> None:
        props: dict[str, Any] = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key in schema.get("required", []):
            if key not in value:
                self.add((*path, key), "required field is missing")
        needs = [b["required"] for b in schema.get("anyOf", []) if "required" in b]
        if needs and not any(all(k in value for k in keys) for keys in needs):
            options = ", or ".join(" and ".join(repr(k) for k in keys) for keys in needs)
            self.add(path, f"needs {options}")
        for key, item in value.items():
            if key in props:
                self.walk(item, props[key], (*path, key))
            elif extra is False:
                self.add((*path, str(key)), f"unknown field{suggest(key, props)}", at_key=True)
            elif schema.get("x-vae-refuse-misspelt-keys") and suggest(key, props, 0.75):
                hint = suggest(key, props, 0.75)
                self.add((*path, str(key)), f"unknown field{hint} (a key of your own goes "
                         "under 'extras')", at_key=True)  # fmt: skip
            elif isinstance(extra, dict):
                self.walk(item, extra, (*path, str(key)))


def _describe(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(str(e) for e in schema["enum"])
    kinds = schema.get("type", [])
    listed: list[str] = kinds if isinstance(kinds, list) else [kinds]
    return " or ".join(_JSON_TYPES.get(k, k) for k in listed if k != "null") or "a value"


def _string_problem(path: Path, value: str = "") -> str:
    if path and path[-1] == "sync_hook":
        return "must be 'module:function'"
    if path and path[-1] == "dtmf" and value:
        bad = [(i, ch) for i, ch in enumerate(value) if ch not in _DTMF_KEYS]
        if bad:
            i, ch = bad[0]
            return f"{ch!r} at character {i + 1} is not a keypad key (0-9, *, #, A-D)"
        return f"{len(value)} keys, at most 64 at once"
    return "must not be empty"


#: The keys of a DTMF keypad (vae/dtmf.py; kept here free of numpy for `vae validate`).
_DTMF_KEYS = frozenset("0123456789*#ABCD")


def check(data: Any) -> list[Issue]:
    """Every problem of one scenario document (schema, then cross-field rules)."""
    walker = _Walker(_schema())
    if not isinstance(data, dict):
        return [Issue((), f"expected a mapping, got {type(data).__name__}")]
    walker.walk(data, {"$ref": "#/$defs/Scenario"}, ())
    if not walker.issues:
        _cross_checks(data, walker)
    return walker.issues


def _cross_checks(data: dict[str, Any], walker: _Walker) -> None:
    _line_checks(data, walker)
    for name, problem in tools_check(data):
        walker.add(parse_field(name), problem)
    for role in ("user", "agent"):
        side = data.get(role) or {}
        for name, problem in caller_check(role, side, data.get("first_speaker")):
            walker.add(parse_field(name), problem)
        flat = data.get(f"{role}_resources")
        resources = flat if isinstance(flat, dict) else side.get("resources") or {}
        declared = set(resources.get("tools") or {})
        effects = side.get("tool_effects") or {}
        known = declared | set(effects)
        if declared:
            for tool in effects:
                if tool not in declared:
                    hint = suggest(tool, declared)
                    walker.add((role, "tool_effects", tool),
                               f"effects for a tool not in resources.tools{hint}",
                               at_key=True)  # fmt: skip
        for name, steps in effects.items():
            for j, step in enumerate(steps):
                if step.get("op") != "get" and not step.get("path"):
                    walker.add((role, "tool_effects", name, j, "op"),
                               f"{step.get('op')} needs a non-empty 'path'")  # fmt: skip
        for i, item in enumerate(side.get("script") or []):
            if role == "user" and isinstance(item, dict) and "heard" in item:
                walker.add((role, "script", i, "heard"),
                           "only an agent step says what it heard")  # fmt: skip
            if role == "agent" and isinstance(item, dict) and "dtmf" in item:
                walker.add((role, "script", i, "dtmf"),
                           "only the caller presses keys (a user step)")  # fmt: skip
            calls = item.get("tool_calls") or [] if isinstance(item, dict) else []
            for j, call in enumerate(calls):
                if known and call["name"] not in known:
                    walker.add((role, "script", i, "tool_calls", j, "name"),
                               f"{call['name']!r} is not one of this side's tools"
                               f"{suggest(call['name'], known)}")  # fmt: skip


def _line_checks(data: dict[str, Any], walker: _Walker) -> None:
    """The phone line: the caller's side only; a loss rate its burst length can give."""
    agent = data.get("agent") or {}
    if isinstance(agent, dict) and agent.get("line") is not None:
        walker.add(("agent", "line"), "the line is the caller's (put it under user.line)",
                   at_key=True)  # fmt: skip
    user = data.get("user") or {}
    line = user.get("line") if isinstance(user, dict) else None
    if isinstance(line, dict):  # the schema checked each field: only their combination is left
        values = {k: v for k, v in line.items() if k in FIELDS and v is not None}
        why = burst_problem(LineConditions(**values))
        if why:
            walker.add(("user", "line", "packet_loss_burst"), why)
