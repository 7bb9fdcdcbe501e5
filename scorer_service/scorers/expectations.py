"""One ``tool_call_expectations`` item against the calls a session made.

An expectation names a tool and any of: whether it must be called at all
(``called``), with which arguments (values or matchers, ``subset`` or
``exact``: :mod:`vae.tools.match`), how many times (``times``: a number or
``{min, max}``, counting the calls with those arguments), and in which order
(``after``/``before`` another tool, ``after_user_turn``/``before_user_turn``:
the caller's turn number N, as said, from its transcripts). Its verdict row
says which check decided (``kind``: called, not_called, arguments, times,
order), the ``argument`` that differed where the kind has one, and a
``reason`` naming the tool — "book_table was called 1 time, never with the
expected arguments: date: expected the date 2026-05-01, got "2026-05-02"".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vae.tools.match import arguments_mismatch, show


@dataclass(frozen=True)
class Call:
    """A call as the expectations see it: from the tool backend, or as the agent reported it."""

    tool: str
    arguments: dict[str, Any] | None
    t_s: float


def _times(n: int) -> str:
    return f"{n} time" if n == 1 else f"{n} times"


def _times_problem(times: Any, count: int) -> str:
    if isinstance(times, int) and not isinstance(times, bool):
        return "" if count == times else f"expected {_times(times)}"
    if isinstance(times, dict):
        low, high = times.get("min"), times.get("max")
        if isinstance(low, int) and count < low:
            return f"expected at least {_times(low)}"
        if isinstance(high, int) and count > high:
            return f"expected at most {_times(high)}"
    return ""


def _row(exp: dict[str, Any], kind: str, passed: bool, reason: str, calls: int,
         argument: str = "") -> dict[str, Any]:  # fmt: skip
    row: dict[str, Any] = {"tool": exp["tool"], "kind": kind, "passed": passed, "reason": reason}
    if argument:
        row["argument"] = argument
    row["calls"] = calls
    if exp.get("message"):
        row["message"] = exp["message"]
    return row


def _ordered(
    exp: dict[str, Any], matching: list[Call], calls: list[Call], caller_turns: list[float]
) -> tuple[list[Call], str]:
    """The matching calls that meet every order constraint, or why none does."""
    tool, left = exp["tool"], matching
    other = exp.get("after")
    if other:
        firsts = [c.t_s for c in calls if c.tool == other]
        if not firsts:
            return [], f"{tool} must come after {other}, which was never called"
        left = [c for c in left if c.t_s > min(firsts)]
        if not left:
            return [], f"{tool} was never called after {other} (first at {min(firsts):.1f} s)"
    other = exp.get("before")
    if other:
        firsts = [c.t_s for c in calls if c.tool == other]
        left = [c for c in left if not firsts or c.t_s < min(firsts)]
        if not left:
            return [], f"{tool} was never called before {other} (first at {min(firsts):.1f} s)"
    turn = exp.get("after_user_turn")
    if isinstance(turn, int):
        if len(caller_turns) < turn:
            said = len(caller_turns)
            return [], f"{tool} must come after the caller's turn {turn}; it said {said}"
        left = [c for c in left if c.t_s > caller_turns[turn - 1]]
        if not left:
            return [], f"{tool} was called before the caller's turn {turn} was said"
    turn = exp.get("before_user_turn")
    if isinstance(turn, int) and len(caller_turns) >= turn:
        left = [c for c in left if c.t_s < caller_turns[turn - 1]]
        if not left:
            return [], f"{tool} was called only after the caller's turn {turn} was said"
    return left, ""


def evaluate(exp: dict[str, Any], calls: list[Call], caller_turns: list[float]) -> dict[str, Any]:
    """One expectation's verdict row; ``caller_turns``: when each caller turn was said (s)."""
    tool = str(exp["tool"])
    expected = exp.get("arguments")
    exact = exp.get("match") == "exact"
    of_tool = [c for c in calls if c.tool == tool]
    matching = of_tool
    if isinstance(expected, dict):
        matching = [
            c for c in of_tool
            if c.arguments is not None and not arguments_mismatch(expected, c.arguments,
                                                                  exact=exact)[0]
        ]  # fmt: skip
    with_args = " with the expected arguments" if isinstance(expected, dict) else ""
    if exp.get("called") is False:
        if matching:
            argument = next(iter(expected)) if isinstance(expected, dict) and expected else ""
            reason = f"{tool} was called {_times(len(matching))}{with_args}; it must never be"
            return _row(exp, "not_called", False, reason, len(of_tool), argument)
        return _row(exp, "not_called", True, f"{tool} was never called{with_args}", len(of_tool))
    if not of_tool:
        return _row(exp, "called", False, f"{tool} was never called", 0)
    if isinstance(expected, dict) and not matching:
        last = of_tool[-1]
        argument, why = arguments_mismatch(expected, last.arguments or {}, exact=exact)
        if last.arguments is None:
            argument, why = next(iter(expected), ""), "the call's body was no JSON object"
        reason = (
            f"{tool} was called {_times(len(of_tool))}, never with the expected arguments: "
            f"{argument}: {why}"
        )
        return _row(exp, "arguments", False, reason, len(of_tool), argument)
    times = exp.get("times")
    why = _times_problem(times, len(matching))
    if why:
        reason = f"{tool} was called {_times(len(matching))}{with_args}, {why}"
        return _row(exp, "times", False, reason, len(of_tool))
    ordered = any(exp.get(k) for k in ("after", "before", "after_user_turn", "before_user_turn"))
    if ordered:
        _, why = _ordered(exp, matching, calls, caller_turns)
        if why:
            return _row(exp, "order", False, why, len(of_tool))
    kind = "order" if ordered else "times" if times is not None else (
        "arguments" if isinstance(expected, dict) else "called")  # fmt: skip
    shown = f" with {show(expected)}" if isinstance(expected, dict) else ""
    reason = f"{tool} was called {_times(len(matching))}{shown} as expected"
    return _row(exp, kind, True, reason, len(of_tool))
