"""A batch that fails for a reason that is not the database's: nobody waits forever.

The writer's connection is made to raise a plain ``RuntimeError`` mid-batch (a
bug, which no user would run: the one thing replaced here; the database, the
queue and the writer are real). Every caller waiting on that batch — a flush,
a transaction — gets the error at once, the writer reports that it failed, and
what is submitted afterwards is refused instead of queued for nobody.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.recordings.helpers import add_run, add_session
from vae.recordings.backends.locator import Locator
from vae.recordings.backends.writer_conn import Transaction
from vae.recordings.errors import StoreError, WriterClosedError
from vae.recordings.write.writer import open_writer

INSERT = (
    "INSERT INTO events (session_id, side, kind, bridge_ns, payload_json)"
    " VALUES (?, 'user', 'log', 1, '{}')"
)


class Bug(RuntimeError):
    pass


async def test_a_bug_mid_batch_answers_every_flush_and_transaction_waiting_on_it(
    store: Locator, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_writer(store, flush_interval_s=30.0) as writer:
        await add_run(writer, "r", ["s"])
        sid = await add_session(writer, "r", "s", ended=False)
        await writer.flush()
        assert writer._committer is not None

        async def broken(sql: str, rows: Any) -> None:
            raise Bug("a bug between BEGIN and COMMIT")

        monkeypatch.setattr(writer._committer.conn, "executemany", broken)

        async def count(tx: Transaction) -> int:
            return len(await tx.execute("SELECT 1"))

        # One batch: a row, a flush waiting for it, a transaction queued after both.
        writer.execute_nowait(INSERT, (sid,))
        flushed = asyncio.ensure_future(writer.flush())
        transacted = asyncio.ensure_future(writer.transaction(count))
        _, pending = await asyncio.wait({flushed, transacted}, timeout=10)
        assert not pending, "a caller still waits on the failed batch"
        for future in (flushed, transacted):
            error = future.exception()
            assert isinstance(error, Bug) and "between BEGIN and COMMIT" in str(error)
        await asyncio.wait_for(writer.failed.wait(), 10)
        assert isinstance(writer.failure, Bug)
        # Nothing queues for a writer that has stopped: refused at once, naming why.
        with pytest.raises(StoreError, match="between BEGIN and COMMIT"):
            await asyncio.wait_for(writer.flush(), 10)
    # Leaving the block closed the writer without raising the bug a second time (it was
    # logged, kept in ``failure`` and given to every waiter): its connection is closed.
    with pytest.raises(WriterClosedError):
        _ = writer.dialect


async def test_a_writer_cancelled_mid_batch_answers_the_flushes_waiting_on_it(
    store: Locator, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_writer(store, flush_interval_s=30.0) as writer:
        await add_run(writer, "r", ["s"])
        sid = await add_session(writer, "r", "s", ended=False)
        await writer.flush()
        assert writer._committer is not None and writer._task is not None
        entered = asyncio.Event()

        async def hangs(sql: str, rows: Any) -> None:
            entered.set()
            await asyncio.Event().wait()

        monkeypatch.setattr(writer._committer.conn, "executemany", hangs)
        writer.execute_nowait(INSERT, (sid,))
        flushed = asyncio.ensure_future(writer.flush())
        await asyncio.wait_for(entered.wait(), 10)
        writer._task.cancel()  # as the process shutting the writer down mid-commit would
        with pytest.raises(WriterClosedError, match="stopped before this batch was committed"):
            await asyncio.wait_for(flushed, 10)
        with pytest.raises(WriterClosedError, match="was cancelled"):
            await asyncio.wait_for(writer.flush(), 10)
    assert writer.failed.is_set()
