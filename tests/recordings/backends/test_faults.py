"""The writer's storage failures: deleted file, lock held beyond the timeout.

Lock cases run on both back ends (another connection holding the write
lock: :class:`~tests.recordings.helpers.WriteLock`). (Disk full is tested end
to end on a real tmpfs: tests/bridge_service/test_storage_faults.py and
tests/cli/scoring/test_storage_faults_rescore.py; a PostgreSQL server stopped under
the writer: tests/recordings/backends/test_pg_faults.py.)
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from tests.recordings.helpers import WriteLock, add_run, add_session, query
from vae.recordings.backends.locator import Locator
from vae.recordings.errors import StorageError
from vae.recordings.models import EventKind, EventRecord, Side
from vae.recordings.write.writer import RecordingWriter, open_writer


def _event(sid: str, i: int) -> EventRecord:
    return EventRecord(sid, Side.USER, EventKind.LOG, time.time_ns(), {"i": i})


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


async def test_lock_held_beyond_the_timeout_fails_the_writer(store: Locator) -> None:
    writer = RecordingWriter(store, flush_interval_s=0.01, lock_timeout_s=1.0, busy_timeout_ms=200)
    await writer.start()
    holder = WriteLock(store)
    try:
        await add_run(writer, "r", ["s"])
        sid = await add_session(writer, "r", "s", ended=False)
        await writer.flush()
        holder.hold()
        await writer.add_events([_event(sid, 1)])
        t0 = time.monotonic()
        with pytest.raises(StorageError, match="stayed locked"):
            await asyncio.wait_for(writer.flush(), 10)
        assert time.monotonic() - t0 < 5
        # The run's status update is kept and recorded once the lock is gone.
        await writer.update_run_status("r", "failed", 1)
        holder.release()
    finally:
        holder.close()
        await asyncio.wait_for(writer.close(), 10)
    assert query(store, "SELECT status FROM runs WHERE run_id = 'r'") == [("failed",)]


async def test_a_success_status_is_never_salvaged(store: Locator) -> None:
    """After a failure, "completed" / "complete" would vouch for rows that were lost."""
    writer = RecordingWriter(store, flush_interval_s=0.01, lock_timeout_s=1.0, busy_timeout_ms=200)
    await writer.start()
    holder = WriteLock(store)
    try:
        await add_run(writer, "ok", ["s"])
        await add_run(writer, "bad", ["s"])
        sid = await add_session(writer, "ok", "s", ended=False)
        bad_sid = await add_session(writer, "bad", "s", ended=False)
        await writer.flush()
        holder.hold()
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
        holder.release()
    finally:
        holder.close()
        await asyncio.wait_for(writer.close(), 10)
    runs = dict(query(store, "SELECT run_id, status FROM runs"))
    sessions = dict(query(store, "SELECT session_id, stop_reason FROM sessions"))
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


async def test_a_write_waiting_for_room_ends_when_the_writer_fails(store: Locator) -> None:
    writer = RecordingWriter(
        store, flush_interval_s=0.01, max_pending=10, lock_timeout_s=1.0, busy_timeout_ms=200
    )
    await writer.start()
    holder = WriteLock(store)
    try:
        await add_run(writer, "r", ["s"])
        sid = await add_session(writer, "r", "s", ended=False)
        await writer.flush()
        holder.hold()
        # The committer is stuck on the lock; the queue fills and this write waits for room.
        waiting = asyncio.ensure_future(writer.add_events([_event(sid, i) for i in range(40)]))
        await asyncio.wait_for(writer.failed.wait(), 10)
        await asyncio.wait_for(waiting, 2)
        assert writer.pending == 0
        holder.release()
    finally:
        holder.close()
        await asyncio.wait_for(writer.close(), 10)


async def test_a_refused_row_costs_only_itself(store: Locator) -> None:
    """One row the database refuses (NOT NULL) in a batch: the others are committed."""
    async with open_writer(store, flush_interval_s=0.05) as writer:
        await add_run(writer, "r", ["s"])
        sid = await add_session(writer, "r", "s", ended=False)
        await writer.flush()
        await writer.add_events([_event(sid, 1)])
        writer.execute_nowait(
            "INSERT INTO events (session_id, side, kind, bridge_ns, payload_json)"
            " VALUES (?, 'user', 'log', 1, '{}')",
            (None,),
        )
        await writer.add_events([_event(sid, 2)])
        await writer.update_run_status("r", "completed", 3)
        await writer.flush()
        assert not writer.failed.is_set()
    logged = query(store, "SELECT payload_json FROM events WHERE kind = 'log' ORDER BY id")
    assert [json.loads(p)["i"] for (p,) in logged] == [1, 2]
    assert query(store, "SELECT status FROM runs") == [("completed",)]
