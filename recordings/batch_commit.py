"""Committing one batch of the single writer: one transaction, or a clean failure.

The writer's queue (:mod:`recordings.batch_writer`) hands over a batch already
grouped into ``(statement, rows)`` runs; this module owns what happens between
``BEGIN IMMEDIATE`` and ``COMMIT``, which changes with SQLite's failure modes
rather than with how rows are queued:

- a database locked by another process is waited on (SQLite's busy timeout,
  then retries with backoff) for up to ``lock_timeout_s``; the batch is kept
  until it commits;
- a storage failure (disk full, I/O error, the file deleted, replaced or
  read-only, a lock held beyond the timeout) raises
  :class:`~recordings.errors.StorageError`, keeping the rows
  :func:`~recordings.writer_faults.salvage` may still record;
- any other error is one bad row: the batch is committed row by row so every
  good row is kept and each bad one logged.

How these errors are told apart is :mod:`recordings.writer_faults`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from pathlib import Path
from typing import Any

import aiosqlite

from recordings import writer_faults
from recordings.errors import StorageError

log = logging.getLogger("vae.recordings.writer")

Row = tuple[Any, ...]
#: Consecutive rows of one statement, committed with a single ``executemany``.
Group = tuple[str, list[Row]]


class BatchCommitter:
    """Commits grouped rows on the writer's connection, one transaction per batch."""

    def __init__(
        self,
        db: aiosqlite.Connection,
        path: Path,
        *,
        lock_timeout_s: float,
        busy_timeout_ms: int,
        salvage: list[tuple[str, Row]],
    ) -> None:
        self.db = db
        self.path = path
        self.lock_timeout_s = lock_timeout_s
        self.busy_timeout_ms = busy_timeout_ms
        #: The writer's list of statements to try once more at close.
        self.salvage = salvage
        # The file as it was when the writer connected: a different inode means replaced.
        self.identity = writer_faults.file_identity(path)
        self.rows_written = 0
        self.batches_written = 0

    async def commit(self, groups: list[Group]) -> None:
        """Commit ``groups`` in one transaction (row by row if a row breaks it)."""
        db = self.db
        attempt = 0
        waited = 0.0
        while True:
            if writer_faults.file_identity(self.path) != self.identity:
                self._keep_salvageable(groups)
                raise StorageError(f"{self.path} was deleted or replaced while vae was writing it")
            try:
                await db.execute("BEGIN IMMEDIATE")
                for sql, rows in groups:
                    await db.executemany(sql, rows)
                await db.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                await self._rollback()
                if writer_faults.is_lock_error(exc):
                    attempt += 1
                    delay = min(0.05 * 2**attempt, 2.0)
                    waited += delay + self.busy_timeout_ms / 1000
                    if waited > self.lock_timeout_s:
                        self._keep_salvageable(groups)
                        raise StorageError(
                            f"{self.path} stayed locked for over {self.lock_timeout_s:g} s"
                        ) from exc
                    log.warning("database %s is locked; retrying in %.2fs", self.path, delay)
                    await asyncio.sleep(delay)
                    continue
                if writer_faults.is_storage_error(exc):
                    self._keep_salvageable(groups)
                    raise StorageError(f"{self.path} cannot be written: {exc}") from exc
                await self._commit_rows_one_by_one(groups, exc)
                return
            except sqlite3.DatabaseError as exc:
                await self._rollback()
                if writer_faults.is_storage_error(exc):
                    self._keep_salvageable(groups)
                    raise StorageError(f"{self.path} cannot be written: {exc}") from exc
                await self._commit_rows_one_by_one(groups, exc)
                return
            self.rows_written += sum(len(r) for _, r in groups)
            self.batches_written += 1
            return

    def _keep_salvageable(self, groups: list[Group]) -> None:
        for sql, rows in groups:
            self.salvage.extend((sql, row) for row in rows if writer_faults.salvageable(sql, row))

    async def _commit_rows_one_by_one(self, groups: list[Group], cause: BaseException) -> None:
        """A row broke the batch: keep every good row, log each bad one."""
        log.error("batch failed (%s); committing row by row", cause)
        db = self.db
        try:
            await db.execute("BEGIN IMMEDIATE")
            for sql, rows in groups:
                for row in rows:
                    try:
                        await db.execute(sql, row)
                        self.rows_written += 1
                    except sqlite3.DatabaseError as exc:
                        if writer_faults.is_storage_error(exc):
                            raise
                        log.error("row refused by the database (%s): %s %.200r", exc, sql, row)
            await db.execute("COMMIT")
        except sqlite3.Error as exc:
            await self._rollback()
            self._keep_salvageable(groups)
            raise StorageError(f"{self.path} cannot be written: {exc}") from exc

    async def _rollback(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            await self.db.execute("ROLLBACK")
