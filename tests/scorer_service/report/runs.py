"""A small scored run for the report tests (synthetic recordings, real scoring).

Two domains; ``book_table`` passes everything, ``change_flight`` fails
ACTION_MATCH (wrong date), DB_STATE_MATCH (with a diff) and CLEAN_EXIT (the
user hung up), and holds a user barge-in over the agent's second turn.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from scorer_service.config import ScoringConfig
from scorer_service.rescore import rescore
from tests.factories import SessionSpec, ToolCallSpec, Turn, conversation, scenario, write_run_sync


def make_run(db_path: Path) -> str:
    ok = SessionSpec(
        "book_table",
        turns=conversation(2),
        tool_calls=[ToolCallSpec("book", {"name": "Ann", "party": 4}, at_s=3.0)],
        agent_state={"bookings": [{"name": "Ann", "party": 4}]},
    )
    bad = SessionSpec(
        "change_flight",
        turns=[
            Turn("agent", 0.5, 2.0, "SkyJet, how can I help?"),
            Turn("user", 2.6, 4.0, "Move my flight to Friday."),
            Turn("agent", 4.6, 8.0, "Let me explain the fare rules first."),
            Turn("user", 6.0, 7.0, "Sorry, just Friday please."),
            Turn("agent", 7.6, 9.0, "Moved to Saturday."),
        ],
        tool_calls=[ToolCallSpec("change_flight", {"date": "saturday"}, at_s=7.5)],
        agent_state={"bookings": {"B1": {"date": "saturday"}}},
        stop_reason="user_hang_up",
    )
    docs = [
        scenario(
            "book_table",
            reference_answer={"tool": "book", "name": "Ann"},
            expected_scenario_db={"bookings": [{"name": "Ann", "party": 4}]},
            success_signals=["ACTION_MATCH", "DB_STATE_MATCH", "CLEAN_EXIT"],
        ),
        scenario(
            "change_flight",
            domain="airline",
            reference_answer={"tool": "change_flight", "date": "friday"},
            expected_scenario_db={"bookings": {"B1": {"date": "friday"}}},
            success_signals=["ACTION_MATCH", "DB_STATE_MATCH", "CLEAN_EXIT"],
        ),
    ]
    return write_run_sync(db_path, docs, [ok, bad]).run_id


def score(db_path: Path, run_id: str, config: ScoringConfig | None = None) -> str:
    result = asyncio.run(rescore(db_path, run_id, config or ScoringConfig()))
    return result.scoring.scoring_id
