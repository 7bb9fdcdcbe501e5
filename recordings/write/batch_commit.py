"""Committing one batch of the single writer: one transaction, or a clean failure.

The writer's queue (:mod:`vae.recordings.write.batch_writer`) hands over a batch already
grouped into ``(statement, rows)`` runs; this module owns what happens between
``BEGIN`` and ``COMMIT``, which changes with the database's failure modes
rather than with how rows are queued. Whatever the back end
(:mod:`vae.recordings.backends.writer_conn` tells its errors apart):

- a database locked by another process is waited on (the connection's busy
  or lock timeout, then retries with backoff) for up to ``lock_timeout_s``;
  the batch is kept until it commits;
- a storage failure (disk full, I/O error, the file deleted, replaced or
  read-only, the server stopped or unreachable, a lock held beyond the
  timeout) raises :class:`~vae.recordings.errors.StorageError`, keeping the rows
  :func:`~vae.recordings.backends.faults.salvage` may still record;
- any other error is one bad row: the batch is committed row by row so every
  good row is kept and each bad one logged;
- an error that is not the database's (a bug) stops the writer: every flush
  and transaction of the batch is answered with it, so no caller waits forever.

:meth:`BatchCommitter.run_transaction` runs a caller's read-modify-write
(``writer.transaction(work)``) under the same rules: retried from the start
while locked, a storage failure stops the writer, anything else is the
caller's own error, rolled back and handed back to it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from vae.recordings.backends import faults as writer_faults
from vae.recordings.backends.writer_conn import Row, Transaction, WriterConnection
from vae.recordings.errors import StorageError, WriterClosedError

log = logging.getLogger("vae.recordings.writer")

__all__ = ["Barrier", "BatchCommitter", "Group", "Item", "Row", "TransactionItem", "Write"]

#: Consecutive rows of one statement, committed with a single ``executemany``.
Group = tuple[str, list[Row]]
Work = Callable[[Transaction], Awaitable[Any]]


@dataclass(slots=True)
class Write:
    """One row of one statement, queued."""

    sql: str
    row: Row


@dataclass(slots=True)
class Barrier:
    """Resolved once everything queued before it is committed (``flush``)."""

    done: asyncio.Future[None]


@dataclass(slots=True)
class TransactionItem:
    """A caller's ``work``, run in its own transaction where it was queued."""

    work: Work
    done: asyncio.Future[Any]


Item = Write | Barrier | TransactionItem


class BatchCommitter:
    """Commits grouped rows on the writer's connection, one transaction per batch."""

    def __init__(
        self,
        conn: WriterConnection,
        *,
        lock_timeout_s: float,
        busy_timeout_ms: int,
        salvage: list[tuple[str, Row]],
    ) -> None:
        self.conn = conn
        self.name = conn.locator.display()
        #: The store (``str()`` of it: the file, or the URL), as older code names it.
        self.path = conn.locator
        self.lock_timeout_s = lock_timeout_s
        self.busy_timeout_ms = busy_timeout_ms
        #: The writer's list of statements to try once more at close.
        self.salvage = salvage
        self.rows_written = 0
        self.batches_written = 0

    async def commit_batch(self, batch: list[Item]) -> None:
        """Commit a batch's rows in order, running each transaction where it was queued.

        Raises :class:`StorageError` (every waiter of the batch gets it too).
        """
        groups: list[Group] = []
        waiting: list[Barrier | TransactionItem] = []
        try:
            for item in batch:
                if isinstance(item, Write):
                    if groups and groups[-1][0] == item.sql:
                        groups[-1][1].append(item.row)
                    else:
                        groups.append((item.sql, [item.row]))
                    continue
                waiting.append(item)
                if isinstance(item, TransactionItem):
                    if groups:
                        await self.commit(groups)
                        groups = []
                    await self._transact(item)
            if groups:
                await self.commit(groups)
        except StorageError as exc:
            _answer(batch, waiting, exc)
            raise
        except Exception as exc:
            # Not the database's fault: a bug here or in the connection. The writer stops
            # (its loop re-raises it), and every caller waiting on this batch — taken off
            # the queue already, so the writer's own clean-up cannot reach it — gets the
            # error instead of waiting forever.
            _answer(batch, waiting, exc)
            raise
        except asyncio.CancelledError:
            # The writer's task was cancelled mid-batch: nothing more will commit it.
            stopped = f"writer for {self.name} stopped before this batch was committed"
            _answer(batch, waiting, WriterClosedError(stopped))
            raise
        for item in waiting:
            if not item.done.done():
                item.done.set_result(None)

    async def _transact(self, item: TransactionItem) -> None:
        try:
            result = await self.run_transaction(item.work)
        except StorageError:
            raise
        except Exception as exc:  # the caller's own failure: theirs to handle
            if not item.done.done():
                item.done.set_exception(exc)
            return
        if not item.done.done():
            item.done.set_result(result)

    async def commit(self, groups: list[Group]) -> None:
        """Commit ``groups`` in one transaction (row by row if a row breaks it)."""
        conn = self.conn
        attempt = 0
        waited = 0.0
        while True:
            lost = conn.lost()
            if lost:
                self._keep_salvageable(groups)
                raise StorageError(lost)
            try:
                await conn.begin()
                for sql, rows in groups:
                    await conn.executemany(sql, rows)
                await conn.commit()
            except Exception as exc:
                kind = conn.fault(exc)
                if kind is None:
                    raise
                await conn.rollback()
                if kind == "lock":
                    attempt, waited = await self._wait_for_lock(exc, attempt, waited, groups)
                    continue
                if kind == "storage":
                    self._keep_salvageable(groups)
                    raise StorageError(f"{self.name} cannot be written: {_line(exc)}") from exc
                await self._commit_rows_one_by_one(groups, exc)
                return
            self.rows_written += sum(len(r) for _, r in groups)
            self.batches_written += 1
            return

    async def run_transaction(self, work: Work) -> Any:
        """Run ``work`` in one transaction and return its result (see the module docstring)."""
        conn = self.conn
        attempt = 0
        waited = 0.0
        while True:
            lost = conn.lost()
            if lost:
                raise StorageError(lost)
            try:
                await conn.begin()
                result = await work(Transaction(conn))
                await conn.commit()
            except Exception as exc:
                kind = conn.fault(exc)
                await conn.rollback()
                if kind == "lock":
                    attempt, waited = await self._wait_for_lock(exc, attempt, waited, [])
                    continue
                if kind == "storage":
                    raise StorageError(f"{self.name} cannot be written: {_line(exc)}") from exc
                raise
            return result

    async def _wait_for_lock(
        self, exc: BaseException, attempt: int, waited: float, groups: list[Group]
    ) -> tuple[int, float]:
        attempt += 1
        delay = min(0.05 * 2**attempt, 2.0)
        waited += delay + self.busy_timeout_ms / 1000
        if waited > self.lock_timeout_s:
            self._keep_salvageable(groups)
            raise StorageError(
                f"{self.name} stayed locked for over {self.lock_timeout_s:g} s"
            ) from exc
        log.warning("database %s is locked; retrying in %.2fs", self.name, delay)
        await asyncio.sleep(delay)
        return attempt, waited

    def _keep_salvageable(self, groups: list[Group]) -> None:
        for sql, rows in groups:
            self.salvage.extend((sql, row) for row in rows if writer_faults.salvageable(sql, row))

    async def _commit_rows_one_by_one(self, groups: list[Group], cause: BaseException) -> None:
        """A row broke the batch: keep every good row, log each bad one."""
        log.error("batch failed (%s); committing row by row", cause)
        conn = self.conn
        try:
            await conn.begin()
            for sql, rows in groups:
                for row in rows:
                    try:
                        await conn.execute_row(sql, row)
                        self.rows_written += 1
                    except Exception as exc:
                        if conn.fault(exc) in (None, "storage"):
                            raise
                        log.error("row refused by the database (%s): %s %.200r", exc, sql, row)
            await conn.commit()
        except Exception as exc:
            if conn.fault(exc) is None:
                raise
            await conn.rollback()
            self._keep_salvageable(groups)
            raise StorageError(f"{self.name} cannot be written: {_line(exc)}") from exc


def _answer(batch: list[Item], waiting: list[Barrier | TransactionItem], exc: Exception) -> None:
    """Fail every flush and transaction of ``batch`` not answered yet with ``exc``."""
    for item in (*waiting, *(i for i in batch if isinstance(i, TransactionItem))):
        if not item.done.done():
            item.done.set_exception(exc)


def _line(exc: BaseException) -> str:
    """An error's message on one line (PostgreSQL's span several)."""
    return " ".join(str(exc).split())
