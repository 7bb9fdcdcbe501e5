"""DB_STATE_ASSERTION: declarative assertions over the recorded final state.

Two forms, one verdict each (stored with expected and actual):

- ``{side, path, op, value}`` — ``path`` is dotted with integer list indices
  (``orders.0.status``); ``op`` is one of :data:`OPERATORS`;
- ``{side, func_name, arguments, assert_value, message}`` — a named predicate
  from the registry (:func:`register_predicate`) called as
  ``func(state, **arguments)``; it passes when it returns ``assert_value``
  (default true), as in the established tau2 ``env_assertions``.

An assertion that errors (missing path, unknown predicate, a predicate that
raises, no final state) is a failure that keeps its error. The signal passes
when every assertion passes; its value is the pass rate.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from vae.recordings.models import Verdict
from vae.scorer_service import signals
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.scorer import SignalScore, passed_or_failed

Predicate = Callable[..., Any]
PREDICATES: dict[str, Predicate] = {}


class AssertionFailure(Exception):
    """An assertion could not be evaluated (kept as its error)."""


def register_predicate(name: str) -> Callable[[Predicate], Predicate]:
    """Register ``func(state, **arguments)`` under ``name`` for ``func_name`` assertions."""

    def add(func: Predicate) -> Predicate:
        PREDICATES[name] = func
        return func

    return add


def resolve(state: Any, path: str) -> Any:
    """Follow a dotted path; raise :class:`AssertionFailure` where it breaks."""
    value = state
    walked: list[str] = []
    for part in [p for p in path.split(".") if p]:
        walked.append(part)
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and re.fullmatch(r"-?\d+", part):
            index = int(part)
            if not -len(value) <= index < len(value):
                raise AssertionFailure(f"{'.'.join(walked)}: index out of range")
            value = value[index]
        else:
            raise AssertionFailure(f"{'.'.join(walked)}: no such key")
    return value


def _contains(container: Any, item: Any) -> bool:
    if isinstance(container, dict | list | str):
        return item in container
    raise AssertionFailure(f"cannot look inside a {type(container).__name__}")


OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda a, b: bool(a == b),
    "ne": lambda a, b: bool(a != b),
    "gt": lambda a, b: bool(a > b),
    "ge": lambda a, b: bool(a >= b),
    "lt": lambda a, b: bool(a < b),
    "le": lambda a, b: bool(a <= b),
    "in": lambda a, b: _contains(b, a),
    "not_in": lambda a, b: not _contains(b, a),
    "contains": _contains,
    "not_contains": lambda a, b: not _contains(a, b),
    "len_eq": lambda a, b: len(a) == b,
    "matches": lambda a, b: re.search(str(b), str(a)) is not None,
}
#: Operators on the path's existence, which take no value.
EXISTENCE = ("exists", "not_exists")


@register_predicate("path_equals")
def _path_equals(state: Any, path: str, value: Any) -> bool:
    return bool(resolve(state, path) == value)


@register_predicate("count_where")
def _count_where(state: Any, path: str, where: dict[str, Any] | None = None) -> int:
    rows = resolve(state, path)
    items = rows.values() if isinstance(rows, dict) else rows
    where = where or {}
    return sum(
        1 for r in items if isinstance(r, dict) and all(r.get(k) == v for k, v in where.items())
    )


def evaluate(item: dict[str, Any], state: Any) -> dict[str, Any]:
    """One assertion's verdict row: passed, expected, actual, error."""
    row: dict[str, Any] = {k: item.get(k) for k in ("side", "path", "op", "func_name") if k in item}
    if item.get("message"):
        row["message"] = item["message"]
    try:
        if state is None:
            raise AssertionFailure(f"no final state recorded for the {item.get('side')} side")
        if "func_name" in item:
            func = PREDICATES.get(str(item["func_name"]))
            if func is None:
                raise AssertionFailure(f"unknown predicate {item['func_name']!r}")
            expected = item.get("assert_value", True)
            actual = func(state, **dict(item.get("arguments") or {}))
            passed = actual == expected
        else:
            op = str(item["op"])
            expected = item.get("value")
            if op in EXISTENCE:
                try:
                    actual = resolve(state, str(item["path"]))
                    found = True
                except AssertionFailure:
                    actual, found = None, False
                passed = found == (op == "exists")
            elif op not in OPERATORS:
                raise AssertionFailure(f"unknown operator {op!r}")
            else:
                actual = resolve(state, str(item["path"]))
                passed = OPERATORS[op](actual, expected)
    except Exception as exc:  # an assertion error is a failure with the error kept
        row.update(
            passed=False,
            expected=item.get("value", item.get("assert_value")),
            actual=None,
            error=f"{type(exc).__name__}: {exc}",
        )
        return row
    row.update(passed=bool(passed), expected=expected, actual=actual, error="")
    return row


class DbStateAssertionScorer:
    name = "db_state_assertion"
    version = "1"
    needs_audio = False

    async def score(self, ctx: ScoringContext) -> list[SignalScore]:
        items = ctx.scenario.db_state_assertions
        if not items:
            detail: dict[str, Any] = {"reason": "no DB assertions"}
            return [SignalScore(signals.DB_STATE_ASSERTION, Verdict.NOT_APPLICABLE, None, detail)]
        rows = []
        for i, item in enumerate(items):
            row = evaluate(item, ctx.state(str(item.get("side", "agent"))))
            rows.append({"index": i, **row})
        passed = sum(1 for r in rows if r["passed"])
        verdict = passed_or_failed(passed == len(rows))
        rate = passed / len(rows)
        return [SignalScore(signals.DB_STATE_ASSERTION, verdict, rate, {"verdicts": rows})]
