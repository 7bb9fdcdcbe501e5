"""Matching a tool call's arguments against what a scenario expects.

Two parts read the same expected arguments and must agree on what matches:
the tool backend choosing a scenario's canned answer (``tool_responses``:
``when``) and the scorer checking ``tool_call_expectations``. So the rules
live here, once, with no I/O.

An expected value is compared with the actual one as follows:

- a *matcher* in place of a value: ``{min: 1, max: 8}`` (a number in range;
  either bound may be left out), ``{regex: "^SJ\\\\d+$"}`` (a string the pattern
  finds, :func:`re.search`), ``{date: "2026-05-01"}`` (an ISO date, or a date
  and time, on that day; ``{date: true}``: any valid ISO date), or
  ``{eq: VALUE}`` (``VALUE`` literally, for a mapping that would read as a
  matcher);
- a mapping: the actual value is a mapping holding every expected key with a
  matching value (a subset; ``exact`` also refuses other keys);
- a list: the same length, item by item;
- a number: the same number (``2`` matches ``2.0``; ``true`` is no number);
- anything else: equal.

:func:`mismatch` returns why a value does not match ("" when it does), in
words fit for a verdict's ``reason``.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

MATCHER_KEYS = (frozenset({"min"}), frozenset({"max"}), frozenset({"min", "max"}),
                frozenset({"regex"}), frozenset({"date"}), frozenset({"eq"}))  # fmt: skip


def is_matcher(value: Any) -> bool:
    """Whether ``value`` is a matcher rather than a literal mapping."""
    return isinstance(value, dict) and frozenset(value) in MATCHER_KEYS


def show(value: Any, limit: int = 60) -> str:
    """A value as JSON, cut to ``limit`` characters."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def parse_date(value: Any) -> dt.date | None:
    """The day of an ISO date (``2026-05-01``) or date and time; None for anything else."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        return dt.date.fromisoformat(text[:10]) if len(text) >= 10 else None
    except ValueError:
        return None


def matcher_problem(matcher: dict[str, Any]) -> str:
    """What is wrong with a matcher as a scenario wrote it ("" when nothing is)."""
    if "min" in matcher or "max" in matcher:
        bad = [k for k in ("min", "max") if k in matcher and _number(matcher[k]) is None]
        return f"{bad[0]} must be a number" if bad else ""
    if "regex" in matcher:
        if not isinstance(matcher["regex"], str):
            return "regex must be a string"
        try:
            re.compile(matcher["regex"])
        except re.error as exc:
            return f"regex does not compile: {exc}"
        return ""
    if "date" in matcher:
        day = matcher["date"]
        if day is True or parse_date(day) is not None:
            return ""
        return "date must be an ISO date (YYYY-MM-DD) or true"
    return ""


def _apply_matcher(matcher: dict[str, Any], actual: Any) -> str:
    if "eq" in matcher:
        return mismatch(matcher["eq"], actual, literal=True)
    if "min" in matcher or "max" in matcher:
        number = _number(actual)
        if number is None:
            return f"expected a number, got {show(actual)}"
        low, high = matcher.get("min"), matcher.get("max")
        if low is not None and number < float(low):
            return f"expected at least {show(low)}, got {show(actual)}"
        if high is not None and number > float(high):
            return f"expected at most {show(high)}, got {show(actual)}"
        return ""
    if "regex" in matcher:
        if not isinstance(actual, str):
            return f"expected a string matching /{matcher['regex']}/, got {show(actual)}"
        try:
            found = re.search(str(matcher["regex"]), actual)
        except re.error as exc:
            return f"the pattern /{matcher['regex']}/ does not compile: {exc}"
        return "" if found else f"expected a match of /{matcher['regex']}/, got {show(actual)}"
    day = parse_date(actual)
    if day is None:
        return f"expected an ISO date, got {show(actual)}"
    want = matcher["date"]
    if want is True:
        return ""
    expected = parse_date(want)
    return "" if day == expected else f"expected the date {want}, got {show(actual)}"


def mismatch(expected: Any, actual: Any, *, exact: bool = False, literal: bool = False) -> str:
    """Why ``actual`` does not match ``expected`` ("" when it does); see the module doc."""
    if not literal and is_matcher(expected):
        return _apply_matcher(expected, actual)
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"expected an object, got {show(actual)}"
        for key, value in expected.items():
            if key not in actual:
                return f"{key}: missing"
            why = mismatch(value, actual[key], exact=exact, literal=literal)
            if why:
                return f"{key}: {why}"
        extra = sorted(set(actual) - set(expected)) if exact else []
        return f"{extra[0]}: not expected (exact)" if extra else ""
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"expected {show(expected)}, got {show(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            why = mismatch(e, a, exact=exact, literal=literal)
            if why:
                return f"[{i}]: {why}"
        return ""
    a, b = _number(expected), _number(actual)
    if a is not None and b is not None:
        return "" if a == b else f"expected {show(expected)}, got {show(actual)}"
    if isinstance(expected, bool) or isinstance(actual, bool):
        same = isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
        return "" if same else f"expected {show(expected)}, got {show(actual)}"
    return "" if expected == actual else f"expected {show(expected)}, got {show(actual)}"


def arguments_mismatch(
    expected: dict[str, Any], actual: dict[str, Any], *, exact: bool = False
) -> tuple[str, str]:
    """``(argument, why)`` for the first expected argument that does not match; ("", "") if all do.

    ``exact``: the call must have no arguments beyond the expected ones.
    """
    for key, value in expected.items():
        if key not in actual:
            return key, "missing"
        why = mismatch(value, actual[key])
        if why:
            return key, why
    if exact:
        extra = sorted(set(actual) - set(expected))
        if extra:
            return extra[0], f"not expected (exact), got {show(actual[extra[0]])}"
    return "", ""
