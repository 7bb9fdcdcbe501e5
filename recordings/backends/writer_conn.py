"""The single writer's connection, for either back end, and its transactions.

The writer's engine (:mod:`vae.recordings.write.batch_writer`,
:mod:`vae.recordings.write.batch_commit`)
knows rows, batches and failures, not databases. It talks to a
:class:`WriterConnection`: ``begin`` / ``commit`` / ``rollback``,
``execute`` / ``executemany`` of the store's portable SQL, and two questions
whose answers differ per database —

- :meth:`WriterConnection.fault`: is this error a held **lock** (wait, retry),
  a **storage** failure (stop the writer) or one bad **row** (keep the rest)?
- :meth:`WriterConnection.lost`: has the store gone from under us (an SQLite
  file deleted or replaced, which SQLite would not notice)?

:class:`SqliteWriter` wraps aiosqlite (the embedded default);
:class:`vae.recordings.backends.pg_async.PgWriter` wraps psycopg's async connection (the
writer picks one by the store's locator: :mod:`vae.recordings.write.batch_writer`).

A :class:`Transaction` is what a caller's ``work`` receives from
``writer.transaction(work)``: statements run in one transaction on the
writer's connection, with results.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiosqlite

from vae.recordings.backends import faults as writer_faults
from vae.recordings.backends.dialect import SQLITE, Dialect
from vae.recordings.backends.locator import Locator

Row = tuple[Any, ...]


class WriterConnection:
    """The writer's one connection (see the module docstring)."""

    dialect: Dialect

    def __init__(self, locator: Locator) -> None:
        self.locator = locator
        #: Rows changed by the last ``execute``.
        self.rowcount = -1

    async def begin(self) -> None:
        await self.execute(self.dialect.begin_write)

    async def commit(self) -> None:
        await self.execute("COMMIT")

    async def rollback(self) -> None:
        """Roll back whatever is open; never raises (a lost connection has nothing open)."""
        with contextlib.suppress(Exception):
            await self.execute("ROLLBACK")

    async def execute(self, sql: str, row: Sequence[Any] = ()) -> list[Row]:
        raise NotImplementedError

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        raise NotImplementedError

    async def execute_row(self, sql: str, row: Sequence[Any]) -> None:
        """One row inside a transaction that survives this row being refused."""
        await self.execute(sql, row)

    def fault(self, exc: BaseException) -> str | None:
        """``lock``, ``storage`` or ``row``; None when ``exc`` is not the database's."""
        raise NotImplementedError

    def lost(self) -> str | None:
        """Why the store is gone from under the writer, or None."""
        return None

    async def close(self) -> None:
        raise NotImplementedError


class SqliteWriter(WriterConnection):
    dialect = SQLITE

    def __init__(self, locator: Locator, db: aiosqlite.Connection) -> None:
        super().__init__(locator)
        self.db = db
        self.path: Path = locator.file
        # The file as it was when the writer connected: a different inode means replaced.
        self.identity = writer_faults.file_identity(self.path)

    @classmethod
    async def connect(cls, locator: Locator, *, busy_timeout_ms: int) -> SqliteWriter:
        db = await aiosqlite.connect(locator.file, isolation_level=None)
        await db.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
        await db.execute("PRAGMA journal_mode = WAL")
        await db.execute("PRAGMA synchronous = NORMAL")
        return cls(locator, db)

    async def begin(self) -> None:
        await self.db.execute("BEGIN IMMEDIATE")

    async def commit(self) -> None:
        await self.db.execute("COMMIT")

    async def rollback(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            await self.db.execute("ROLLBACK")

    async def execute(self, sql: str, row: Sequence[Any] = ()) -> list[Row]:
        cursor = await self.db.execute(sql, row)
        try:
            rows = await cursor.fetchall()
            self.rowcount = cursor.rowcount
        finally:
            await cursor.close()
        return [tuple(r) for r in rows]

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        await self.db.executemany(sql, rows)

    def fault(self, exc: BaseException) -> str | None:
        if not isinstance(exc, sqlite3.Error):
            return None
        if isinstance(exc, sqlite3.OperationalError) and writer_faults.is_lock_error(exc):
            return "lock"
        if writer_faults.is_storage_error(exc):
            return "storage"
        # Anything else from sqlite3 (an interface misuse) is a bug: raised as it is.
        return "row" if isinstance(exc, sqlite3.DatabaseError) else None

    def lost(self) -> str | None:
        if writer_faults.file_identity(self.path) != self.identity:
            return f"{self.path} was deleted or replaced while vae was writing it"
        return None

    async def close(self) -> None:
        await self.db.close()


class Transaction:
    """The statements of one ``writer.transaction(work)``, run in its transaction.

    ``await tx.execute(sql, params)`` returns the rows the statement gives
    (``[]`` for a write; ``tx.rowcount`` says how many rows it changed).
    ``tx.dialect.skip_locked`` / ``tx.dialect.lock_rows`` say how to claim rows:
    on PostgreSQL end the claiming ``SELECT`` with ``tx.dialect.lock_rows``
    (``FOR UPDATE SKIP LOCKED``); on SQLite the transaction already holds the
    database's write lock (``BEGIN IMMEDIATE``), so claimers are serialised.
    """

    def __init__(self, conn: WriterConnection) -> None:
        self._conn = conn
        self.dialect = conn.dialect

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return await self._conn.execute(sql, params)

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        await self._conn.executemany(sql, rows)

    @property
    def rowcount(self) -> int:
        return self._conn.rowcount
