"""A small JSON database and generic tools over it: the one meaning of ``tool_effects``.

Two parts run a scenario's tools and must agree exactly: the reference agent
(``vae bot agent``) runs them on its own copy of the DB, and the tool backend
the bridge serves per session (``vae run --tool-backend``,
:mod:`vae.bridge_service.tools`) runs them for an agent under test. Bots
import only the contract, so the one implementation lives here, with no I/O.

A scenario declares what each tool does as a list of *effects* under the
side's ``tool_effects`` (examples/README.md documents the format)::

    tool_effects:
      change_flight:
        - {op: set, path: "bookings.{booking_id}.date", value: "$args.new_date"}
      get_booking:
        - {op: get, path: "bookings.{booking_id}"}

Operations: ``get`` (the result), ``set``, ``append`` (to a list), ``update``
(merge a mapping), ``delete`` and ``increment``. A path segment ``{NAME}`` and
a value ``"$args.NAME"`` (at any depth) are replaced by the call's argument. A tool with a
mutating effect is a *write action* (what ACTION_MATCH compares and the bridge
syncs); a tool with no declared effects is a read returning ``{"ok": true}``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

MUTATING = frozenset({"set", "append", "update", "delete", "increment"})
OPERATIONS = MUTATING | {"get"}


class ToolError(Exception):
    """A tool call that cannot be carried out; reported as the call's error.

    ``status`` is the HTTP status a tool backend answers it with: 404 when a
    record the call names does not exist, else 422 (the call cannot apply).
    """

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ToolOutcome:
    result: Any
    error: str
    is_write: bool
    #: 200, or the failing effect's :attr:`ToolError.status` (422 for a bad value).
    status: int = 200


def _substitute(value: Any, args: dict[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("$args."):
        key = value[len("$args.") :]
        if key not in args:
            raise ToolError(f"missing argument {key!r}")
        return args[key]
    if isinstance(value, dict):
        return {k: _substitute(v, args) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, args) for v in value]
    return value


def _segments(path: str, args: dict[str, Any]) -> list[str]:
    if not path:
        return []
    out: list[str] = []
    for part in path.split("."):
        if part.startswith("{") and part.endswith("}"):
            key = part[1:-1]
            if key not in args:
                raise ToolError(f"missing argument {key!r}")
            part = str(args[key])
        out.append(part)
    return out


class JsonDb:
    """The side's state: a JSON object changed only through tools and sync deltas."""

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        self.state: dict[str, Any] = copy.deepcopy(state or {})

    def _walk(self, parts: list[str], create: bool) -> tuple[Any, str]:
        node: Any = self.state
        for part in parts[:-1]:
            if isinstance(node, list):
                node = node[_index(part, node)]
                continue
            if not isinstance(node, dict):
                raise ToolError(f"{part!r}: not an object")
            if part not in node:
                if not create:
                    raise ToolError(f"no record {part!r}", 404)
                node[part] = {}
            node = node[part]
        return node, parts[-1]

    def get(self, path: str, args: dict[str, Any] | None = None) -> Any:
        parts = _segments(path, args or {})
        if not parts:
            return copy.deepcopy(self.state)
        parent, key = self._walk(parts, create=False)
        if isinstance(parent, list):
            return copy.deepcopy(parent[_index(key, parent)])
        if not isinstance(parent, dict) or key not in parent:
            raise ToolError(f"no record {key!r}", 404)
        return copy.deepcopy(parent[key])

    def apply(self, effect: dict[str, Any], args: dict[str, Any]) -> Any:
        op = effect.get("op")
        if op not in OPERATIONS:
            raise ToolError(f"unknown op {op!r} ({', '.join(sorted(OPERATIONS))})")
        path = str(effect.get("path", ""))
        if op == "get":
            return self.get(path, args)
        parts = _segments(path, args)
        if not parts:
            raise ToolError(f"{op} needs a path")
        value = _substitute(copy.deepcopy(effect.get("value")), args)
        parent, key = self._walk(parts, create=True)
        if isinstance(parent, list):
            raise ToolError(f"{op} inside a list is not supported")
        if op == "set":
            parent[key] = value
        elif op == "append":
            parent.setdefault(key, [])
            if not isinstance(parent[key], list):
                raise ToolError(f"{path}: not a list")
            parent[key].append(value)
        elif op == "update":
            target = parent.setdefault(key, {})
            if not isinstance(target, dict) or not isinstance(value, dict):
                raise ToolError(f"{path}: update needs objects")
            target.update(value)
        elif op == "delete":
            if key not in parent:
                raise ToolError(f"no record {key!r}", 404)
            del parent[key]
        else:  # increment
            parent[key] = parent.get(key, 0) + (1 if value is None else value)
        return {"ok": True}

    def call(
        self, name: str, args: dict[str, Any], effects: dict[str, list[dict[str, Any]]]
    ) -> ToolOutcome:
        """Run tool ``name``; a failing effect leaves the state as it was."""
        steps = effects.get(name, [])
        is_write = any(step.get("op") in MUTATING for step in steps)
        if not steps:
            return ToolOutcome({"ok": True}, "", False)
        before = copy.deepcopy(self.state)
        result: Any = {"ok": True}
        try:
            for step in steps:
                out = self.apply(step, args)
                if step.get("op") == "get":
                    result = out
        except (ToolError, IndexError, ValueError, TypeError) as exc:
            self.state = before
            status = exc.status if isinstance(exc, ToolError) else 422
            return ToolOutcome(None, str(exc), is_write, status)
        return ToolOutcome(result, "", is_write)

    def merge(self, delta: dict[str, Any]) -> None:
        """Apply a StateSync delta: a deep merge where ``null`` deletes a key."""
        _merge(self.state, delta)


def _merge(target: dict[str, Any], delta: dict[str, Any]) -> None:
    for key, value in delta.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def _index(part: str, node: list[Any]) -> int:
    try:
        i = int(part)
    except ValueError as exc:
        raise ToolError(f"{part!r}: a list needs a numeric index") from exc
    if not -len(node) <= i < len(node):
        raise ToolError(f"index {i} out of range", 404)
    return i
