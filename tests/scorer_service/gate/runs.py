"""Recorded and scored runs for the gate tests (synthetic recordings, real scoring)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.factories import SessionSpec, ToolCallSpec, conversation, scenario, write_run_sync
from tests.scorer_service.conftest import standard_sessions
from tests.scorer_service.report.runs import score
from vae.recordings.write.writer import open_writer
from vae.scorer_service.config import ScoringConfig

NO_JUDGE = ScoringConfig(no_judge=True)


def standard(db: Path, run_id: str = "2024-06-01T10-00-00") -> str:
    """book_ok passes, book_wrong fails ACTION_MATCH (restaurant), db_case fails (telecom)."""
    scenarios, sessions = standard_sessions()
    write_run_sync(db, scenarios, sessions, run_id=run_id)
    score(db, run_id, NO_JUDGE)
    return run_id


def built_to_fail(db: Path, run_id: str, *, tagged: tuple[str, ...] = (),
                  field: tuple[str, ...] = ()) -> str:  # fmt: skip
    """:func:`standard`, with the scenarios in ``tagged`` carrying the ``expect-fail`` tag and
    those in ``field`` ``expect_fail: true`` (book_ok passes, book_wrong and db_case fail)."""
    scenarios, sessions = standard_sessions()
    for doc in scenarios:
        if doc["name"] in tagged:
            doc["tags"] = ["expect-fail", "known-bug"]
        if doc["name"] in field:
            doc["expect_fail"] = True
    write_run_sync(db, scenarios, sessions, run_id=run_id)
    score(db, run_id, NO_JUDGE)
    return run_id


def judge_gated(db: Path, run_id: str = "judged") -> str:
    """Two scenarios; ``ask`` gates on JUDGE_PASSED and, scored without a judge, is unscored."""
    docs = [
        scenario("ask", reference_answer={"tool": "book", "name": "Ann"},
                 success_signals=["ACTION_MATCH", "JUDGE_PASSED"]),
        scenario("book", reference_answer={"tool": "book", "name": "Ann"}),
    ]  # fmt: skip
    specs = [
        SessionSpec(name, turns=conversation(2),
                    tool_calls=[ToolCallSpec("book", {"name": "Ann"}, at_s=3.0)])
        for name in ("ask", "book")
    ]  # fmt: skip
    write_run_sync(db, docs, specs, run_id=run_id)
    score(db, run_id, NO_JUDGE)
    return run_id


def set_status(db: Path, run_id: str, status: str, error: str) -> None:
    async def update() -> None:
        async with open_writer(db) as writer:
            await writer.update_run_status(run_id, status, None, error)
            await writer.flush()

    asyncio.run(update())
