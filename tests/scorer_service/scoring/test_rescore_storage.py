"""A rescore whose last scores cannot be stored is recorded ``failed``, never ``complete``.

A real lock held by another connection beyond the writer's lock timeout fails
the writer while the last session's scores wait to be committed; the rescore
must raise, and the scoring must never read ``complete`` (it would become the
run's current scoring with its scores missing).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.factories import RunInfo
from vae.recordings.errors import StorageError
from vae.recordings.write.writer import open_writer
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore
from vae.scorer_service.scoring.runner import Emit, Planned, ScoringJob, WorkStats
from vae.scorer_service.scoring.session_work import open_worker

NO_AUDIO = ["action_match", "db_state_match", "db_state_assertion", "clean_exit"]


async def test_scores_lost_to_storage_make_the_scoring_failed(
    db_path: Path, recorded_run: RunInfo
) -> None:
    holder = sqlite3.connect(db_path, isolation_level=None, timeout=10)
    # The rescore shares this process's writer for the file: one with a short lock timeout.
    async with open_writer(
        db_path, flush_interval_s=0.01, lock_timeout_s=1.0, busy_timeout_ms=200
    ) as writer:

        def on_progress(done: int, total: int, _outcome: object) -> None:
            if done == total:  # the last session's scores are queued, not yet committed
                holder.execute("BEGIN IMMEDIATE")

        with pytest.raises(StorageError):
            await rescore(db_path, "2024", ScoringConfig(scorers=NO_AUDIO), on_progress=on_progress)
        assert writer.failed.is_set()
        holder.execute("ROLLBACK")  # room again: the kept status updates are salvaged at close
    holder.close()
    conn = sqlite3.connect(db_path)
    rows = conn.execute("SELECT scoring_id, status FROM scorings").fetchall()
    conn.close()
    assert len(rows) == 1, rows
    assert rows[0][1] == "failed", rows


class DroppingRunner:
    """A runner that hands back every session but the last (as a broken runner might)."""

    async def prepare(self) -> None:
        return None

    async def run(
        self, job: ScoringJob, sessions: Sequence[Planned], writer: object, emit: Emit
    ) -> WorkStats:
        async with open_worker(job, 1) as worker:
            for session, scenario in sessions[:-1]:
                await emit(await worker.score(session, scenario))
            return worker.stats


async def test_sessions_a_runner_never_handed_back_make_the_scoring_failed(
    db_path: Path, recorded_run: RunInfo
) -> None:
    with pytest.raises(RuntimeError, match="no scores came back for 1 session"):
        await rescore(db_path, "2024", ScoringConfig(scorers=NO_AUDIO), runner=DroppingRunner())
    conn = sqlite3.connect(db_path)
    rows = conn.execute("SELECT status FROM scorings").fetchall()
    conn.close()
    assert rows == [("failed",)], rows
