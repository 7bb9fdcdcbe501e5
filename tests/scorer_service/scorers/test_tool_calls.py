"""TOOL_CALLS and CLAIMED_NOT_DONE on crafted sessions: every expectation kind passes and fails.

The session: the caller speaks three turns (said at 1.0, 2.5 and 5.0 s); the
tool backend serves check_availability at 2.0 s and book_table at 3.0 s
(booking the 2nd of May where the caller asked for the 1st).
"""

from __future__ import annotations

from typing import Any

import pytest

from vae.recordings.models import (
    EventKind,
    EventRecord,
    ScoreRecord,
    SessionRecord,
    SessionStatus,
    Side,
    Verdict,
)
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.scorer_service import signals
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.context_load import parse_events
from vae.scorer_service.ledger.reasons import reasons
from vae.scorer_service.scorers.tool_calls import ToolCallsScorer

P, F, NA, U = Verdict.PASSED, Verdict.FAILED, Verdict.NOT_APPLICABLE, Verdict.UNSCORED
TOOLS = {
    "check_availability": {"date": "ISO date"},
    "book_table": {"date": "ISO date", "time": "HH:MM", "party_size": "guests"},
    "cancel_booking": {"booking_id": "code"},
}
BOOKED = {"date": "2026-05-02", "time": "19:00", "party_size": 4}


def _served(tool: str, args: Any, status: int = 200) -> dict[str, Any]:
    return {"tool": tool, "arguments": args, "status": status, "result": {"ok": True},
            "error": "" if status < 400 else "down", "transport": "http"}  # fmt: skip


def _ctx(
    expectations: list[dict[str, Any]],
    *,
    backend: bool = True,
    served: list[tuple[float, dict[str, Any]]] | None = None,
    reported: list[tuple[float, dict[str, Any]]] = (),  # type: ignore[assignment]
) -> ScoringContext:
    doc = {"name": "s", "agent": {"resources": {"tools": TOOLS}},
           "tool_call_expectations": expectations}  # fmt: skip
    sc = scenario_from_dict(doc)
    session = SessionRecord("sid", "run", "s", 1, SessionStatus.ENDED, 0, 10**9, "end_tool")
    ctx = ScoringContext(session, sc, sc.domain, False, 0, "tool-only")
    events: list[tuple[float, Side, EventKind, dict[str, Any]]] = []
    if backend:
        events.append((0.1, Side.AGENT, EventKind.TOOL_BACKEND, {"event": "started"}))
        if served is None:
            served = [(2.0, _served("check_availability", {"date": "2026-05-01"})),
                      (3.0, _served("book_table", BOOKED))]  # fmt: skip
        events += [(t, Side.AGENT, EventKind.TOOL_BACKEND_CALL, p) for t, p in served]
    for t, said in ((1.0, "hi"), (2.5, "the first of May please"), (5.0, "bye")):
        events.append((t, Side.USER, EventKind.TRANSCRIPT, {"kind": "spoken", "text": said}))
    for t, payload in reported:
        events.append((t, Side.AGENT, EventKind.TOOL_CALL, {"side": "agent", **payload}))
    records = [EventRecord("sid", side, kind, int(t * 1e9), p) for t, side, kind, p in events]
    parse_events(ctx, sorted(records, key=lambda e: e.bridge_ns))
    return ctx


async def _score(ctx: ScoringContext) -> tuple[Any, Any]:
    tool_calls, claimed = await ToolCallsScorer().score(ctx)
    assert tool_calls.signal == signals.TOOL_CALLS
    assert claimed.signal == signals.CLAIMED_NOT_DONE
    return tool_calls, claimed


BT = "book_table"
#: (id, expectation, passed, kind, argument, words of the reason)
CASES: list[tuple[str, dict[str, Any], bool, str, str, str]] = [
    ("called", {"tool": BT}, True, "called", "", "book_table was called 1 time"),
    ("never called", {"tool": "cancel_booking"}, False, "called", "",
     "cancel_booking was never called"),
    ("not called", {"tool": "cancel_booking", "called": False}, True, "not_called", "", "never"),
    ("called though it must not be", {"tool": BT, "called": False}, False, "not_called", "",
     "book_table was called 1 time; it must never be"),
    ("argument value", {"tool": BT, "arguments": {"date": "2026-05-02"}}, True, "arguments", "",
     "as expected"),
    ("wrong date", {"tool": BT, "arguments": {"date": "2026-05-01", "party_size": 4}}, False,
     "arguments", "date", 'date: expected "2026-05-01", got "2026-05-02"'),
    ("exact", {"tool": BT, "arguments": BOOKED, "match": "exact"}, True, "arguments", "", ""),
    ("exact with more", {"tool": BT, "arguments": {"date": "2026-05-02", "time": "19:00"},
                         "match": "exact"}, False, "arguments", "party_size", "not expected"),
    ("range", {"tool": BT, "arguments": {"party_size": {"min": 1, "max": 8}}}, True,
     "arguments", "", ""),
    ("out of range", {"tool": BT, "arguments": {"party_size": {"min": 1, "max": 3}}}, False,
     "arguments", "party_size", "expected at most 3, got 4"),
    ("regex", {"tool": BT, "arguments": {"time": {"regex": "^19:"}}}, True, "arguments", "", ""),
    ("regex fails", {"tool": BT, "arguments": {"time": {"regex": "^1[2-8]:"}}}, False,
     "arguments", "time", "expected a match of /^1[2-8]:/"),
    ("date", {"tool": BT, "arguments": {"date": {"date": True}}}, True, "arguments", "", ""),
    ("date differs", {"tool": BT, "arguments": {"date": {"date": "2026-05-01"}}}, False,
     "arguments", "date", "expected the date 2026-05-01"),
    ("times", {"tool": BT, "times": 1}, True, "times", "", ""),
    ("times differ", {"tool": BT, "times": 2}, False, "times", "",
     "book_table was called 1 time, expected 2 times"),
    ("times range", {"tool": BT, "times": {"min": 2}}, False, "times", "", "at least 2 times"),
    ("after a tool", {"tool": BT, "after": "check_availability"}, True, "order", "", ""),
    ("not after a tool", {"tool": "check_availability", "after": BT}, False, "order", "",
     "check_availability was never called after book_table"),
    ("before a tool", {"tool": "check_availability", "before": BT}, True, "order", "", ""),
    ("not before a tool", {"tool": BT, "before": "check_availability"}, False, "order", "",
     "book_table was never called before check_availability"),
    ("after a turn", {"tool": BT, "after_user_turn": 2}, True, "order", "", ""),
    ("before that turn", {"tool": BT, "after_user_turn": 3}, False, "order", "",
     "book_table was called before the caller's turn 3 was said"),
    ("before a turn", {"tool": BT, "before_user_turn": 3}, True, "order", "", ""),
    ("after that turn", {"tool": BT, "before_user_turn": 2}, False, "order", "",
     "book_table was called only after the caller's turn 2 was said"),
]  # fmt: skip


@pytest.mark.parametrize(("why", "exp", "passed", "kind", "argument", "words"), CASES,
                         ids=[c[0] for c in CASES])  # fmt: skip
async def test_each_expectation_kind(
    why: str, exp: dict[str, Any], passed: bool, kind: str, argument: str, words: str
) -> None:
    score, _ = await _score(_ctx([{**exp, "message": why}]))
    assert score.verdict is (P if passed else F), score.detail
    (row,) = score.detail["expectations"]
    assert (row["passed"], row["kind"], row.get("argument", "")) == (passed, kind, argument)
    assert row["tool"] == exp["tool"] and row["message"] == why
    assert words in row["reason"] and exp["tool"] in row["reason"], row["reason"]
    assert score.detail["source"] == "backend"


async def test_the_signal_is_the_share_met_and_its_reason_names_the_call() -> None:
    score, _ = await _score(_ctx([{"tool": BT}, {"tool": BT, "arguments": {"date": "2026-05-01"}}]))
    assert score.verdict is F and score.value == pytest.approx(0.5)
    record = ScoreRecord("x", "sid", score.signal, score.value, score.verdict, score.detail)
    (line,) = reasons(record)
    assert line.startswith("book_table was called 1 time, never with the expected arguments: date")


async def test_without_expectations_it_does_not_apply() -> None:
    score, _ = await _score(_ctx([]))
    assert score.verdict is NA


async def test_without_a_backend_the_agents_reports_are_the_evidence() -> None:
    reported = [(3.0, {"name": BT, "arguments": BOOKED})]
    score, claimed = await _score(
        _ctx([{"tool": BT, "arguments": {"date": "2026-05-01"}}], backend=False, reported=reported)
    )
    assert score.verdict is F and score.detail["source"] == "reported"
    assert claimed.verdict is NA  # nothing to hold the reports against
    score, _ = await _score(_ctx([{"tool": BT}], backend=False))
    assert score.verdict is U and score.error.startswith("no_tool_evidence")


async def test_a_backend_that_served_nothing_is_evidence() -> None:
    score, _ = await _score(_ctx([{"tool": BT}], served=[]))
    assert score.verdict is F and score.detail["expectations"][0]["reason"] == (
        "book_table was never called")  # fmt: skip


# ---------------------------------------------------------------- CLAIMED_NOT_DONE
async def test_reports_the_backend_served_pass() -> None:
    _, claimed = await _score(_ctx([], reported=[(3.1, {"name": BT, "arguments": BOOKED})]))
    assert claimed.verdict is P and claimed.detail["claims"][0]["served_status"] == 200
    # One call reported twice (a connector carrying it two ways) is one call served.
    twice = [(3.1, {"name": BT, "arguments": BOOKED}), (3.2, {"name": BT, "arguments": BOOKED})]
    _, claimed = await _score(_ctx([], reported=twice))
    assert claimed.verdict is P and len(claimed.detail["claims"]) == 2


CLAIMS = [
    ("never made", [(4.0, {"name": "cancel_booking", "arguments": {"booking_id": "x"}})],
     "the agent reports cancel_booking {\"booking_id\": \"x\"}, never made to the backend; "
     "the backend never served cancel_booking"),
    ("other arguments", [(3.1, {"name": BT, "arguments": {**BOOKED, "date": "2026-05-01"}})],
     "never made to the backend; the backend served book_table with"),
]  # fmt: skip


@pytest.mark.parametrize(("why", "reported", "words"), CLAIMS, ids=[c[0] for c in CLAIMS])
async def test_a_claimed_call_the_backend_never_served_fails(
    why: str, reported: list[Any], words: str
) -> None:
    _, claimed = await _score(_ctx([], reported=reported))
    assert claimed.verdict is F, claimed.detail
    assert words in claimed.detail["reason"]
    record = ScoreRecord("x", "sid", claimed.signal, claimed.value, claimed.verdict,
                         claimed.detail)  # fmt: skip
    assert words in reasons(record)[0]


async def test_a_call_reported_as_done_that_the_backend_refused_fails() -> None:
    served = [(3.0, _served(BT, BOOKED, status=503))]
    reported = [(3.1, {"name": BT, "arguments": BOOKED})]
    _, claimed = await _score(_ctx([], served=served, reported=reported))
    assert claimed.verdict is F
    assert (
        claimed.detail["reason"]
        == "the agent reports book_table as done; the backend answered it 503"
    )
    # Reported as failed, it is backed.
    _, claimed = await _score(_ctx([], served=served, reported=[
        (3.1, {"name": BT, "arguments": BOOKED, "error": "503 from the API"})]))  # fmt: skip
    assert claimed.verdict is P


async def test_no_reports_do_not_apply() -> None:
    _, claimed = await _score(_ctx([]))
    assert claimed.verdict is NA
