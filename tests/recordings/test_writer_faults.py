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
