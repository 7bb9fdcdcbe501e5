"""The writer's storage failures: deleted file, lock held beyond the timeout.

(Disk full is tested end to end on a real tmpfs: tests/bridge_service/
test_storage_faults.py and tests/cli/test_storage_faults_rescore.py.)
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest

from recordings.errors import StorageError
from recordings.models import EventKind, EventRecord, Side
from recordings.writer import RecordingWriter
from tests.recordings.helpers import add_run, add_session


def _event(sid: str, i: int) -> EventRecord:
    return EventRecord(sid, Side.USER, EventKind.LOG, time.time_ns(), 0, {"i": i})


async def test_deleted_database_fails_the_writer(db_path: Path) -> None:
    writer = RecordingWriter(db_path, flush_interval_s=0.01)
    await writer.start()
    try:
        await add_run(writer, "r", ["s"])
        sid = await add_session(writer, "r", "s", ended=False)
        await writer.flush()
        await asyncio.to_thread(db_path.unlink)
        await writer.add_events([_event(sid, 1)])
        with pytest.raises(StorageError, match="deleted or replaced"):
            await asyncio.wait_for(writer.flush(), 5)
        assert writer.failed.is_set()
        await writer.add_events([_event(sid, 2)])  # dropped, never raises or blocks
    finally:
        await asyncio.wait_for(writer.close(), 5)


async def test_lock_held_beyond_the_timeout_fails_the_writer(db_path: Path) -> None:
    writer = RecordingWriter(
        db_path, flush_interval_s=0.01, lock_timeout_s=1.0, busy_timeout_ms=200
    )
    await writer.start()
    holder = sqlite3.connect(db_path, isolation_level=None)
    try:
        await add_run(writer, "r", ["s"])
        sid = await add_session(writer, "r", "s", ended=False)
        await writer.flush()
        holder.execute("BEGIN IMMEDIATE")
        await writer.add_events([_event(sid, 1)])
        t0 = time.monotonic()
        with pytest.raises(StorageError, match="stayed locked"):
            await asyncio.wait_for(writer.flush(), 10)
        assert time.monotonic() - t0 < 5
        # The run's status update is kept and recorded once the lock is gone.
        await writer.update_run_status("r", "failed", 1)
        holder.execute("ROLLBACK")
    finally:
        holder.close()
        await asyncio.wait_for(writer.close(), 10)
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT status FROM runs WHERE run_id = 'r'").fetchone()[0] == "failed"
    conn.close()


async def test_a_success_status_is_never_salvaged(db_path: Path) -> None:
    """After a failure, "completed" / "complete" would vouch for rows that were lost."""
    writer = RecordingWriter(
        db_path, flush_interval_s=0.01, lock_timeout_s=1.0, busy_timeout_ms=200
    )
    await writer.start()
    holder = sqlite3.connect(db_path, isolation_level=None)
    try:
        await add_run(writer, "ok", ["s"])
        await add_run(writer, "bad", ["s"])
        sid = await add_session(writer, "ok", "s", ended=False)
        bad_sid = await add_session(writer, "bad", "s", ended=False)
        await writer.flush()
        holder.execute("BEGIN IMMEDIATE")
        await writer.add_events([_event(sid, 1)])
        # Queued before the failure, in the batch that fails:
        await writer.update_run_status("ok", "completed", 1)
        await writer.end_session(
            sid, ended_ns=2, stop_reason="end_tool", clean_exit=True, user_turns=1, agent_turns=1
        )
        with pytest.raises(StorageError, match="stayed locked"):
            await asyncio.wait_for(writer.flush(), 10)
        # Queued after it:
        await writer.update_run_status("ok", "completed", 3)
        await writer.update_run_status("bad", "failed", 3)
        await writer.end_session(
            bad_sid,
            ended_ns=3,
            stop_reason="storage_error",
            clean_exit=False,
            user_turns=0,
            agent_turns=0,
        )
        holder.execute("ROLLBACK")
    finally:
        holder.close()
        await asyncio.wait_for(writer.close(), 10)
    conn = sqlite3.connect(db_path)
    runs = dict(conn.execute("SELECT run_id, status FROM runs").fetchall())
    sessions = dict(conn.execute("SELECT session_id, stop_reason FROM sessions").fetchall())
    conn.close()
    assert runs == {"ok": "running", "bad": "failed"}
    assert sessions[sid] is None  # never ended: unfinished, never a finished end_tool
    assert sessions[bad_sid] == "storage_error"


async def test_writes_after_a_failure_are_dropped_and_never_wait(db_path: Path) -> None:
    """A full queue after a failure: an awaited write returns at once, nothing is queued."""
    writer = RecordingWriter(db_path, flush_interval_s=0.01, max_pending=10)
    await writer.start()
    try:
        await add_run(writer, "r", ["s"])
        sid = await add_session(writer, "r", "s", ended=False)
        await writer.flush()
        await asyncio.to_thread(db_path.unlink)
        await writer.add_events([_event(sid, 1)])
        with pytest.raises(StorageError):
            await asyncio.wait_for(writer.flush(), 5)
        for i in range(30):
            writer.execute_nowait("INSERT INTO events_x VALUES (?)", (i,))
        assert writer.pending == 0
        await asyncio.wait_for(writer.add_events([_event(sid, i) for i in range(30)]), 2)
        assert writer.pending == 0
        with pytest.raises(StorageError):
            await asyncio.wait_for(writer.flush(), 2)
    finally:
        await asyncio.wait_for(writer.close(), 5)


async def test_a_write_waiting_for_room_ends_when_the_writer_fails(db_path: Path) -> None:
    writer = RecordingWriter(
        db_path, flush_interval_s=0.01, max_pending=10, lock_timeout_s=1.0, busy_timeout_ms=200
    )
    await writer.start()
    holder = sqlite3.connect(db_path, isolation_level=None)
    try:
        await add_run(writer, "r", ["s"])
        sid = await add_session(writer, "r", "s", ended=False)
        await writer.flush()
        holder.execute("BEGIN IMMEDIATE")
        # The committer is stuck on the lock; the queue fills and this write waits for room.
        waiting = asyncio.ensure_future(writer.add_events([_event(sid, i) for i in range(40)]))
        await asyncio.wait_for(writer.failed.wait(), 10)
        await asyncio.wait_for(waiting, 2)
        assert writer.pending == 0
        holder.execute("ROLLBACK")
    finally:
        holder.close()
        await asyncio.wait_for(writer.close(), 10)
