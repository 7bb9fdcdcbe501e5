"""DB_STATE_MATCH and DB_STATE_ASSERTION, table-driven over real contexts."""

from __future__ import annotations

from typing import Any

import pytest

from vae.recordings.canonical import state_hash
from vae.recordings.models import FinalStateRecord, SessionRecord, SessionStatus, Side, Verdict
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.scorers.db_assertion import (
    DbStateAssertionScorer,
    evaluate,
    register_predicate,
)
from vae.scorer_service.scorers.db_state import DbStateMatchScorer, diff

P, F, NA = Verdict.PASSED, Verdict.FAILED, Verdict.NOT_APPLICABLE


def ctx(agent: Any = None, user: Any = None, **scenario: Any) -> ScoringContext:
    sc = scenario_from_dict({"name": "s", **scenario})
    session = SessionRecord("sid", "run", "s", 1, SessionStatus.ENDED, 0, 10**9, "end_tool")
    states = {}
    for side, state in ((Side.AGENT, agent), (Side.USER, user)):
        if state is not None:
            states[side] = FinalStateRecord("sid", side, 1, state)
    return ScoringContext(session, sc, sc.domain, False, 0, "tool-only", final_states=states)


MATCH_CASES: list[tuple[str, dict[str, Any], Any, Any, Verdict]] = [
    ("no expected DB", {}, {"a": 1}, None, NA),
    ("equal", {"expected_scenario_db": {"a": 1}}, {"a": 1}, None, P),
    ("float normalised", {"expected_scenario_db": {"a": 1}}, {"a": 1.0}, None, P),
    ("null spellings", {"expected_scenario_db": {"a": None}}, {"a": "none"}, None, P),
    ("key order irrelevant", {"expected_scenario_db": {"a": 1, "b": 2}}, {"b": 2, "a": 1}, None, P),
    ("session key dropped", {"expected_scenario_db": {"a": 1}}, {"a": 1, "session": "x"}, None, P),
    (
        "list order matters by default",
        {"expected_scenario_db": {"l": [1, 2]}},
        {"l": [2, 1]},
        None,
        F,
    ),
    (
        "declared order-independent list",
        {"expected_scenario_db": {"l": [1, 2]}, "order_independent_lists": ["l"]},
        {"l": [2, 1]},
        None,
        P,
    ),
    ("different value", {"expected_scenario_db": {"a": 1}}, {"a": 2}, None, F),
    ("missing final state", {"expected_scenario_db": {"a": 1}}, None, None, F),
    (
        "user side compared too",
        {"expected_scenario_db": {"a": 1}, "expected_user_db": {"u": True}},
        {"a": 1},
        {"u": False},
        F,
    ),
    (
        "both sides match",
        {"expected_scenario_db": {"a": 1}, "expected_user_db": {"u": True}},
        {"a": 1},
        {"u": True},
        P,
    ),
]


@pytest.mark.parametrize(
    ("fields", "agent", "user", "expected"),
    [c[1:] for c in MATCH_CASES],
    ids=[c[0] for c in MATCH_CASES],
)
async def test_db_state_match(
    fields: dict[str, Any], agent: Any, user: Any, expected: Verdict
) -> None:
    [score] = await DbStateMatchScorer().score(ctx(agent, user, **fields))
    assert score.verdict is expected
    if expected is F and agent is not None:
        sides = score.detail["sides"]
        assert any(s["diff"] for s in sides.values()), "a mismatch must explain itself"


def test_diff_is_readable() -> None:
    rows = diff({"a": 1, "b": {"c": [1, 2]}}, {"a": 1, "b": {"c": [1, 3]}, "d": 0})
    assert {"path": "b.c[1]", "expected": 2, "actual": 3} in rows
    assert {"path": "d", "expected": "<missing>", "actual": 0} in rows


@register_predicate("has_booking_for")
def _has_booking_for(state: Any, name: str) -> bool:
    return any(b["name"] == name for b in state["bookings"])


@register_predicate("explodes")
def _explodes(state: Any) -> bool:
    raise RuntimeError("boom")


STATE = {"bookings": [{"name": "Ann", "party": 2}], "status": "open", "count": 3}
ASSERT_CASES: list[tuple[str, dict[str, Any], bool, str]] = [
    ("eq", {"path": "status", "op": "eq", "value": "open"}, True, ""),
    ("eq fails", {"path": "status", "op": "eq", "value": "closed"}, False, ""),
    ("ne", {"path": "status", "op": "ne", "value": "closed"}, True, ""),
    ("gt", {"path": "count", "op": "gt", "value": 2}, True, ""),
    ("le", {"path": "count", "op": "le", "value": 2}, False, ""),
    ("list index", {"path": "bookings.0.party", "op": "eq", "value": 2}, True, ""),
    ("len_eq", {"path": "bookings", "op": "len_eq", "value": 1}, True, ""),
    ("contains", {"path": "status", "op": "contains", "value": "pe"}, True, ""),
    ("in", {"path": "status", "op": "in", "value": ["open", "held"]}, True, ""),
    ("not_in", {"path": "status", "op": "not_in", "value": ["open"]}, False, ""),
    ("matches", {"path": "status", "op": "matches", "value": "^o.*n$"}, True, ""),
    ("exists", {"path": "bookings.0.name", "op": "exists"}, True, ""),
    ("not_exists", {"path": "refund", "op": "not_exists"}, True, ""),
    (
        "missing path is an error",
        {"path": "refund.amount", "op": "eq", "value": 1},
        False,
        "no such key",
    ),
    ("index out of range", {"path": "bookings.5", "op": "exists"}, False, ""),
    ("unknown operator", {"path": "status", "op": "approx", "value": 1}, False, "unknown operator"),
    ("type error kept", {"path": "status", "op": "gt", "value": 1}, False, "TypeError"),
    ("predicate", {"func_name": "has_booking_for", "arguments": {"name": "Ann"}}, True, ""),
    (
        "predicate assert_value false",
        {"func_name": "has_booking_for", "arguments": {"name": "Zed"}, "assert_value": False},
        True,
        "",
    ),
    ("predicate fails", {"func_name": "has_booking_for", "arguments": {"name": "Zed"}}, False, ""),
    ("predicate raises", {"func_name": "explodes"}, False, "boom"),
    ("unknown predicate", {"func_name": "nope"}, False, "unknown predicate"),
    (
        "builtin count_where",
        {
            "func_name": "count_where",
            "arguments": {"path": "bookings", "where": {"name": "Ann"}},
            "assert_value": 1,
        },
        True,
        "",
    ),
]


@pytest.mark.parametrize(
    ("item", "passed", "error"), [c[1:] for c in ASSERT_CASES], ids=[c[0] for c in ASSERT_CASES]
)
def test_db_assertion(item: dict[str, Any], passed: bool, error: str) -> None:
    row = evaluate(dict(item, side="agent"), STATE)
    assert row["passed"] is passed
    assert error in row["error"]
    assert "expected" in row and "actual" in row


async def test_db_assertion_scorer_rate_and_missing_state() -> None:
    items = [
        {"path": "status", "op": "eq", "value": "open"},
        {"path": "count", "op": "eq", "value": 4},
        {"side": "user", "path": "x", "op": "exists"},
    ]
    [score] = await DbStateAssertionScorer().score(ctx(STATE, None, db_state_assertions=items))
    assert score.verdict is F
    assert score.value == pytest.approx(1 / 3)
    verdicts = score.detail["verdicts"]
    assert [v["passed"] for v in verdicts] == [True, False, False]
    assert "no final state" in verdicts[2]["error"]
    [none] = await DbStateAssertionScorer().score(ctx(STATE))
    assert none.verdict is NA


def _hash_only_ctx(recorded_hash: str, **scenario: Any) -> ScoringContext:
    """A session whose final state is a hash only (as imported runs are)."""
    sc = scenario_from_dict({"name": "s", **scenario})
    session = SessionRecord("sid", "run", "s", 1, SessionStatus.ENDED, 0, 10**9, "end_tool")
    states = {Side.AGENT: FinalStateRecord("sid", Side.AGENT, 1, None, recorded_hash)}
    return ScoringContext(session, sc, sc.domain, False, 0, "tool-only", final_states=states)


@pytest.mark.parametrize(
    ("recorded", "fields", "expected"),
    [
        (state_hash({"a": 1}), {"expected_scenario_db": {"a": 1}}, P),
        (state_hash({"a": 2}), {"expected_scenario_db": {"a": 1}}, F),
        ("abc", {"agent": {"extras": {"expected_db_hash": "abc"}}}, P),
        ("abd", {"agent": {"extras": {"expected_db_hash": "abc"}}}, F),
        ("abc", {}, NA),
    ],
)
async def test_db_state_match_by_hash_when_no_state(
    recorded: str, fields: dict[str, Any], expected: Verdict
) -> None:
    [score] = await DbStateMatchScorer().score(_hash_only_ctx(recorded, **fields))
    assert score.verdict is expected
    if expected is not NA:
        assert "hash only" in score.detail["sides"]["agent"]["reason"]
