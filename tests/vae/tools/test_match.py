"""Expected arguments against actual ones: values, matchers, subset and exact."""

from __future__ import annotations

from typing import Any

import pytest

from vae.tools.match import arguments_mismatch, is_matcher, matcher_problem, mismatch

CASES: list[tuple[Any, Any, str]] = [
    ("2026-05-01", "2026-05-01", ""),
    ("2026-05-01", "2026-05-02", 'expected "2026-05-01", got "2026-05-02"'),
    (2, 2.0, ""),
    (2, True, "expected 2, got true"),
    (True, 1, "expected true, got 1"),
    ({"min": 1, "max": 8}, 8, ""),
    ({"min": 1, "max": 8}, 9, "expected at most 8, got 9"),
    ({"min": 1}, 0, "expected at least 1, got 0"),
    ({"max": 3}, "2", 'expected a number, got "2"'),
    ({"regex": "^SJ\\d+$"}, "SJ1042", ""),
    ({"regex": "^SJ\\d+$"}, "sj1042", "expected a match of /^SJ\\d+$/"),
    ({"regex": "x"}, 5, "expected a string matching /x/, got 5"),
    ({"date": "2026-05-01"}, "2026-05-01T19:00:00", ""),
    ({"date": "2026-05-01"}, "2026-05-02", "expected the date 2026-05-01"),
    ({"date": True}, "2026-02-30", 'expected an ISO date, got "2026-02-30"'),
    ({"eq": {"min": 1}}, {"min": 1}, ""),
    ({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}}, ""),
    ({"a": {"b": 1}}, {"a": {"b": 2}}, "a: b: expected 1, got 2"),
    ([1, {"min": 2}], [1, 3], ""),
    ([1, 2], [1], "expected [1, 2], got [1]"),
]


@pytest.mark.parametrize(("expected", "actual", "why"), CASES)
def test_mismatch(expected: Any, actual: Any, why: str) -> None:
    got = mismatch(expected, actual)
    assert (got == "") if not why else (why in got), got


def test_arguments_subset_and_exact() -> None:
    actual = {"date": "2026-05-02", "party": 4}
    assert arguments_mismatch({"party": {"min": 2}}, actual) == ("", "")
    assert arguments_mismatch({"date": "2026-05-01"}, actual)[0] == "date"
    assert arguments_mismatch({"time": "19:00"}, actual) == ("time", "missing")
    arg, why = arguments_mismatch({"date": "2026-05-02"}, actual, exact=True)
    assert arg == "party" and "not expected (exact)" in why
    assert arguments_mismatch(actual, actual, exact=True) == ("", "")


def test_matcher_shapes() -> None:
    assert is_matcher({"min": 1}) and is_matcher({"regex": "x"}) and not is_matcher({"a": 1})
    assert not is_matcher({"min": 1, "regex": "x"})
    assert matcher_problem({"regex": "("}).startswith("regex does not compile")
    assert matcher_problem({"min": "one"}) == "min must be a number"
    assert matcher_problem({"date": "May 1"}).startswith("date must be an ISO date")
    assert matcher_problem({"date": True}) == matcher_problem({"max": 2.5}) == ""
