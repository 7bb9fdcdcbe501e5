"""A small scored run for the report tests (synthetic recordings, real scoring).

Two domains; ``book_table`` passes everything, ``change_flight`` fails
ACTION_MATCH (wrong date), DB_STATE_MATCH (with a diff) and CLEAN_EXIT (the
user hung up), and holds a user barge-in over the agent's second turn.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.factories import (
    BASE_NS,
    SessionSpec,
    ToolCallSpec,
    Turn,
    conversation,
    scenario,
    write_run_sync,
)
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore


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


RUN_A = "2024-06-01T10-00-00"
RUN_B = "2024-06-02T10-00-00"


def _flight(date: str, version: str) -> SessionSpec:
    return SessionSpec(
        "change_flight",
        turns=[
            Turn("agent", 0.5, 2.0, "SkyJet, how can I help?"),
            Turn("user", 2.6, 4.0, "Move my flight to Friday."),
            Turn("agent", 4.6, 6.0, f"Moved to {date.title()}."),
        ],
        tool_calls=[ToolCallSpec("change_flight", {"date": date}, at_s=4.5)],
        agent_state={"bookings": {"B1": {"date": date}}},
        agent_bot={"name": "skyjet-agent", "version": version},
    )


def _table(party: int, version: str) -> SessionSpec:
    return SessionSpec(
        "book_table",
        turns=conversation(2),
        tool_calls=[ToolCallSpec("book", {"name": "Ann", "party": party}, at_s=3.0)],
        agent_state={"bookings": [{"name": "Ann", "party": party}]},
        agent_bot={"name": "skyjet-agent", "version": version},
    )


def pair_docs() -> list[dict[str, object]]:
    return [
        scenario(
            "book_table",
            reference_answer={"tool": "book", "name": "Ann", "party": 4},
            success_signals=["ACTION_MATCH", "CLEAN_EXIT"],
        ),
        scenario(
            "change_flight",
            domain="airline",
            reference_answer={"tool": "change_flight", "date": "friday"},
            expected_scenario_db={"bookings": {"B1": {"date": "friday"}}},
            success_signals=["ACTION_MATCH", "DB_STATE_MATCH", "CLEAN_EXIT"],
        ),
    ]


def make_pair(db_path: Path, *, built_to_fail_in_b: tuple[str, ...] = ()) -> tuple[str, str]:
    """Agent v1 (run A) then v2 (run B), both scored: in B ``change_flight``
    regressed (saturday instead of friday) and ``book_table`` was fixed (party 4).

    ``built_to_fail_in_b``: scenarios run B's suite tags ``expect-fail``."""
    write_run_sync(
        db_path, pair_docs(), [_table(2, "1.0"), _flight("friday", "1.0")],
        run_id=RUN_A, options={"seed": 1},
    )  # fmt: skip
    docs_b = [{**d, "tags": ["expect-fail"]} if d["name"] in built_to_fail_in_b else d
              for d in pair_docs()]  # fmt: skip
    write_run_sync(
        db_path, docs_b, [_table(4, "2.0"), _flight("saturday", "2.0")],
        run_id=RUN_B, options={"seed": 2}, created_ns=BASE_NS + 86_400 * 10**9,
    )  # fmt: skip
    score(db_path, RUN_A)
    score(db_path, RUN_B)
    return RUN_A, RUN_B


def make_large_run(db_path: Path, n: int = 200) -> str:
    """``n`` scored sessions over four domains, every fourth failing ACTION_MATCH.

    Each is a 2-exchange call of about 8 s with a tool call: a run of the size
    a nightly suite produces, for the report's scale test and benchmark.
    """
    domains = ("airline", "retail", "restaurant", "telecom")
    docs, specs = [], []
    for i in range(n):
        name = f"scenario_{i:03d}_{domains[i % 4]}_with_a_long_descriptive_name"
        docs.append(
            scenario(name, domain=domains[i % 4], reference_answer={"tool": "book", "n": i},
                     success_signals=["ACTION_MATCH", "CLEAN_EXIT"])
        )  # fmt: skip
        got = i + 1 if i % 4 == 3 else i
        specs.append(
            SessionSpec(name, turns=conversation(2),
                        tool_calls=[ToolCallSpec("book", {"n": got}, at_s=3.0)])
        )  # fmt: skip
    run_id = write_run_sync(db_path, docs, specs, run_id="large").run_id
    score(db_path, run_id)
    return run_id
