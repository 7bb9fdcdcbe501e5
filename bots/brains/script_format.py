"""A scripted side's ``script``, parsed: what each step waits for, says and does.

Why apart from ``scripted`` (which plays a script on a live conversation):
the format of a script — its fields, their defaults and the errors that name
a bad one — changes with examples/README.md's script format, not with how a
step's cue is heard or timed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vae import dtmf


class ScriptError(ValueError):
    """A script that cannot be played; names the field and the problem."""

    def __init__(self, field_name: str, problem: str) -> None:
        super().__init__(f"script {field_name}: {problem}")
        self.field = field_name
        self.problem = problem


@dataclass(frozen=True)
class ScriptedCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ScriptItem:
    say: str = ""
    tool_calls: tuple[ScriptedCall, ...] = ()
    barge_in_after_s: float | None = None
    wait_s: float | None = None
    no_wait: bool = False
    end: bool = False
    #: Agent only: what it reports hearing of the caller's preceding turn, and acts on.
    heard: str | None = None
    #: User only: keys pressed after ``say`` (DTMF; the bridge carries them to the agent).
    dtmf: str = ""


@dataclass(frozen=True)
class Script:
    items: tuple[ScriptItem, ...]
    speaks_first: bool
    tool_effects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    response_delay_s: float = 0.15
    #: Seconds of the peer talking over us before we stop; None never yields.
    yield_after_s: float | None = 0.3


_ITEM_KEYS = {
    "say", "tool_calls", "barge_in_after_s", "wait_s", "no_wait", "end", "heard", "dtmf",
}  # fmt: skip


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ScriptError(where, "must be a non-negative number of seconds")
    return float(value)


def parse_script(config: dict[str, Any], role: str) -> Script:
    """Validate a side's config; raise :class:`ScriptError` naming the field."""
    raw = config.get("script", [])
    if not isinstance(raw, list):
        raise ScriptError("script", "must be a list of items")
    items: list[ScriptItem] = []
    for i, entry in enumerate(raw):
        where = f"script[{i}]"
        if isinstance(entry, str):
            entry = {"say": entry}
        if not isinstance(entry, dict):
            raise ScriptError(where, "must be a mapping or a line of text")
        unknown = sorted(set(entry) - _ITEM_KEYS)
        if unknown:
            raise ScriptError(f"{where}.{unknown[0]}", "unknown field")
        say = entry.get("say", "")
        if not isinstance(say, str):
            raise ScriptError(f"{where}.say", "must be a string")
        calls = []
        raw_calls = entry.get("tool_calls", [])
        if not isinstance(raw_calls, list):
            raise ScriptError(f"{where}.tool_calls", "must be a list")
        for j, call in enumerate(raw_calls):
            cw = f"{where}.tool_calls[{j}]"
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise ScriptError(cw, "needs a 'name'")
            args = call.get("arguments", {})
            if not isinstance(args, dict):
                raise ScriptError(f"{cw}.arguments", "must be a mapping")
            calls.append(ScriptedCall(call["name"], dict(args)))
        barge = entry.get("barge_in_after_s")
        wait = entry.get("wait_s")
        heard = entry.get("heard")
        if heard is not None and not isinstance(heard, str):
            raise ScriptError(f"{where}.heard", "must be a string")
        if heard is not None and role != "agent":
            raise ScriptError(f"{where}.heard", "only an agent step says what it heard")
        keys = entry.get("dtmf")
        if keys is not None and (not isinstance(keys, str) or dtmf.problem(keys)):
            why = dtmf.problem(keys) if isinstance(keys, str) else "must be a string of keys"
            raise ScriptError(f"{where}.dtmf", why)
        if keys is not None and role != "user":
            raise ScriptError(f"{where}.dtmf", "only the caller presses keys (a user step)")
        items.append(
            ScriptItem(
                say=say.strip(),
                tool_calls=tuple(calls),
                barge_in_after_s=None
                if barge is None
                else _number(barge, f"{where}.barge_in_after_s"),
                wait_s=None if wait is None else _number(wait, f"{where}.wait_s"),
                no_wait=bool(entry.get("no_wait", False)),
                end=bool(entry.get("end", False)),
                heard=None if heard is None else heard.strip(),
                dtmf=keys or "",
            )
        )
    effects = config.get("tool_effects", {})
    if not isinstance(effects, dict) or not all(isinstance(v, list) for v in effects.values()):
        raise ScriptError("tool_effects", "must map tool names to lists of effects")
    speaks_first = config.get("speaks_first", role == "agent")
    yield_after = config.get("yield_after_s", 0.3)
    return Script(
        items=tuple(items),
        speaks_first=bool(speaks_first),
        tool_effects=effects,
        response_delay_s=_number(config.get("response_delay_s", 0.15), "response_delay_s"),
        yield_after_s=None if yield_after is None else _number(yield_after, "yield_after_s"),
    )


#: How long an agent waits before each reply, given its script's delay
#: (:mod:`vae.bots.brains.capacity`: slower when more calls are in progress).
