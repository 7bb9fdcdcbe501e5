"""The single writer's connection to a PostgreSQL store (psycopg's async API).

What the writer needs from PostgreSQL, mapped onto SQLite's meaning:

- one transaction per batch, ``executemany`` per run of one statement
  (psycopg pipelines those: one round trip for many rows);
- a lock held by another process is waited on for ``busy_timeout_ms``
  (``lock_timeout``), then reported as a lock, so the engine retries with
  backoff up to its lock timeout, exactly as with SQLite's busy timeout;
- one refused row inside a transaction aborts the whole transaction on
  PostgreSQL (not on SQLite), so when the engine commits row by row each row
  runs under a ``SAVEPOINT``;
- the server stopping, the connection breaking, a full disk, a read-only
  server, the schema dropped: :func:`vae.recordings.backends.pg.fault` says ``storage``
  and the writer stops cleanly (nothing reconnects behind its back: a batch
  is committed once or not at all).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import psycopg

from vae.recordings.backends import pg
from vae.recordings.backends.dialect import POSTGRES
from vae.recordings.backends.locator import Locator
from vae.recordings.backends.writer_conn import Row, WriterConnection


class PgWriter(WriterConnection):
    dialect = POSTGRES

    def __init__(self, locator: Locator, raw: psycopg.AsyncConnection[Any]) -> None:
        super().__init__(locator)
        self.raw = raw

    @classmethod
    async def connect(cls, locator: Locator, *, busy_timeout_ms: int) -> PgWriter:
        info = pg.conninfo_for(locator)
        try:
            raw = await psycopg.AsyncConnection.connect(**info, autocommit=True)
            await raw.execute(f"SET lock_timeout = '{int(busy_timeout_ms)}ms'")
        except psycopg.Error as exc:
            raise pg.unavailable(locator, exc) from exc
        pg.adapt(raw)
        return cls(locator, raw)

    async def begin(self) -> None:
        await self.raw.execute("BEGIN")

    async def commit(self) -> None:
        await self.raw.execute("COMMIT")

    async def rollback(self) -> None:
        if self.raw.closed or self.raw.broken:
            return
        with contextlib.suppress(psycopg.Error):
            await self.raw.execute("ROLLBACK")

    async def execute(self, sql: str, row: Sequence[Any] = ()) -> list[Row]:
        cur = await self.raw.execute(POSTGRES.translate(sql), pg.params(row))
        self.rowcount = cur.rowcount
        return await cur.fetchall() if cur.description else []

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        async with self.raw.cursor() as cur:
            await cur.executemany(POSTGRES.translate(sql), [pg.params(r) for r in rows])

    async def execute_row(self, sql: str, row: Sequence[Any]) -> None:
        await self.raw.execute("SAVEPOINT vae_row")
        try:
            await self.execute(sql, row)
        except psycopg.Error:
            if not (self.raw.closed or self.raw.broken):
                await self.raw.execute("ROLLBACK TO SAVEPOINT vae_row")
            raise
        await self.raw.execute("RELEASE SAVEPOINT vae_row")

    def fault(self, exc: BaseException) -> str | None:
        return pg.fault(exc, self.raw)

    async def close(self) -> None:
        await self.raw.close()
