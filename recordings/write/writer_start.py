"""How the store's single writer starts: the store prepared, then its connection.

Why apart from :mod:`vae.recordings.write.batch_writer` (the queue and the
committer task): which back end's connection the writer holds (SQLite or
PostgreSQL) and what is repaired before the first write (scorings that a
process which died left ``running`` are marked ``interrupted``) change with
the back ends, not with how rows are batched.
"""

from __future__ import annotations

import logging

from vae.recordings.backends.connection import open_store
from vae.recordings.backends.locator import Locator
from vae.recordings.backends.writer_conn import SqliteWriter, WriterConnection
from vae.recordings.write.scoring_owner import mark_interrupted

log = logging.getLogger("vae.recordings.writer")


async def connect_writer(locator: Locator, *, busy_timeout_ms: int) -> WriterConnection:
    """The writer's connection to ``locator``'s store (already opened and migrated)."""
    if locator.is_postgres:
        from vae.recordings.backends.pg_async import PgWriter

        return await PgWriter.connect(locator, busy_timeout_ms=busy_timeout_ms)
    return await SqliteWriter.connect(locator, busy_timeout_ms=busy_timeout_ms)


def prepare_store(locator: Locator) -> None:
    """Open and migrate the store, and mark scorings a dead process left running."""
    conn = open_store(locator)
    try:
        marked = mark_interrupted(conn)
        if marked:
            log.warning("scorings left running by a process that died: %s (interrupted)", marked)
    finally:
        conn.close()
