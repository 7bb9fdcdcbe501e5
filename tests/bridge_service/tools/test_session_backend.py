"""The tool backend inside real sessions: the bridge, the reference bots, the store, the scorer.

The reference agent calls its tools through the session's backend over HTTP
(``vae bot agent --tool-backend``); the backend's DB at the end is what
DB_STATE_ASSERTION judges, every call is recorded, and two sessions of one
run never see each other's bookings. An agent that runs its tools on its own
DB instead only *says* it booked: CLAIMED_NOT_DONE and the DB assertion fail.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.bots.conftest import bridge, run_with_bots  # noqa: F401 (the bridge fixture)
from vae.bots.brains.backend_tools import through_backend
from vae.bots.brains.scripted import play_script
from vae.bridge_service.server import BridgeServer
from vae.recordings.canonical import state_hash
from vae.recordings.models import EventKind, Side, Verdict
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore

pytest.importorskip("mcp", reason="the tools extra (pip install 'vae[tools]') is not installed")

SIGNALS = ["DB_STATE_ASSERTION", "TOOL_CALLS", "CLAIMED_NOT_DONE"]


def booking(name: str, day: str, *, scenario_switch: bool) -> dict[str, Any]:
    """A caller books a table for ``day``; the agent books it, reads it back and ends."""
    args = {"date": day, "time": "19:00", "party_size": 4}
    return {
        "name": name,
        "domain": "restaurant",
        "max_duration": 40,
        "tool_backend": scenario_switch,
        "user": {"script": [f"A table for four on {day} at seven please.", "Thanks, bye."]},
        "agent": {
            "resources": {"tools": {
                "book_table": {"date": "ISO date", "time": "HH:MM", "party_size": "guests"},
                "get_booking": {"date": "ISO date"},
            }},
            "tool_effects": {
                "book_table": [
                    {"op": "set", "path": "bookings.{date}",
                     "value": {"time": "$args.time", "party": "$args.party_size"}},
                    {"op": "increment", "path": "stats.booked"},
                ],
                "get_booking": [{"op": "get", "path": "bookings.{date}"}],
            },
            "tool_argument_types": {"book_table": {"date": "date", "party_size": "integer"}},
            "script": [
                "Hello, Trattoria.",
                {"tool_calls": [{"name": "book_table", "arguments": args},
                                {"name": "get_booking", "arguments": {"date": day}}],
                 "say": "Booked, goodbye.", "end": True},
            ],
        },
        "initial_state": {"bookings": {}, "stats": {"booked": 0}},
        "db_state_assertions": [
            {"path": f"bookings.{day}.party", "op": "eq", "value": 4},
            {"path": "stats.booked", "op": "eq", "value": 1},
        ],
        "tool_call_expectations": [
            {"tool": "book_table", "arguments": {"date": day}, "times": 1, "after_user_turn": 1},
            {"tool": "get_booking", "after": "book_table"},
        ],
        "success_signals": SIGNALS,
    }  # fmt: skip


async def _scores(server: BridgeServer, run_id: str) -> dict[str, dict[str, Any]]:
    config = ScoringConfig(scorers=["db_state_assertion", "tool_calls"], no_judge=True)
    result = await rescore(server.db_path, run_id, config)
    return {o.scenario_name: o for o in result.sessions}  # type: ignore[misc]


async def test_the_backend_is_the_agents_world(bridge: BridgeServer) -> None:  # noqa: F811
    scenarios = [booking("first_of_may", "2026-05-01", scenario_switch=True),
                 booking("second_of_may", "2026-05-02", scenario_switch=False)]  # fmt: skip
    run_id = await run_with_bots(
        bridge, scenarios, agent=lambda: through_backend(play_script), tool_backend=True
    )
    by_name = await _scores(bridge, run_id)
    with RecordingReader(bridge.db_path) as reader:
        for sc, day in (("first_of_may", "2026-05-01"), ("second_of_may", "2026-05-02")):
            outcome = by_name[sc]
            for signal in SIGNALS:
                score = outcome.get(signal)
                assert score is not None and score.verdict is Verdict.PASSED, (sc, signal, score)
            sid = outcome.session_id
            calls = reader.events(sid, [EventKind.TOOL_BACKEND_CALL])
            assert [(e.payload["tool"], e.payload["status"]) for e in calls] == [
                ("book_table", 200), ("get_booking", 200)]  # fmt: skip
            assert calls[1].payload["result"] == {"time": "19:00", "party": 4}
            assert all(e.side is Side.AGENT and e.payload["transport"] == "http" for e in calls)
            marks = [e.payload["event"] for e in reader.events(sid, [EventKind.TOOL_BACKEND])]
            assert marks == ["started", "stopped"]
            # The agent's final state is the backend's: only this session's booking.
            final = reader.final_states(sid)[Side.AGENT]
            assert final.state == {"bookings": {day: {"time": "19:00", "party": 4}},
                                   "stats": {"booked": 1}}  # fmt: skip
            assert final.state_hash == state_hash(final.state)
            assert final.context, "the agent's own context history is kept"
            session = reader.session(sid)
            assert session is not None and session.stop_reason == "end_tool"


async def test_an_agent_that_only_says_it_booked_fails(bridge: BridgeServer) -> None:  # noqa: F811
    """The agent runs its tools on its own DB: the backend serves nothing."""
    run_id = await run_with_bots(
        bridge,
        [booking("says_only", "2026-05-01", scenario_switch=True)],
        agent=lambda: play_script,
    )
    outcome = (await _scores(bridge, run_id))["says_only"]
    claimed = outcome.get("CLAIMED_NOT_DONE")
    assert claimed is not None and claimed.verdict is Verdict.FAILED
    assert "the agent reports book_table" in claimed.detail["reason"]
    assert "the backend never served book_table" in claimed.detail["reason"]
    calls = outcome.get("TOOL_CALLS")
    assert calls is not None and calls.verdict is Verdict.FAILED
    assert calls.detail["expectations"][0]["reason"] == "book_table was never called"
    db = outcome.get("DB_STATE_ASSERTION")
    assert db is not None and db.verdict is Verdict.FAILED  # the world did not change
    with RecordingReader(bridge.db_path) as reader:
        events = reader.events(outcome.session_id, [EventKind.TOOL_BACKEND])
        stopped = next(e.payload for e in events if e.payload["event"] == "stopped")
        final = reader.final_states(outcome.session_id)[Side.AGENT]
    assert stopped["calls"] == 0 and "note" in stopped  # it reported a state of its own
    assert final.state == {"bookings": {}, "stats": {"booked": 0}}
