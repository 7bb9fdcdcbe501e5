"""The queue and the single committer task behind every write to a store.

Every write in a process goes through one writer per store (see
:func:`vae.recordings.write.writer.open_writer`), so the database never sees two writers
of ours competing for its lock. This module is that writer's engine, whatever
the rows mean and whichever database holds them (SQLite or PostgreSQL:
:mod:`vae.recordings.backends.writer_conn`): callers enqueue rows on a bounded queue
(awaiting when it is full —
backpressure, never loss), and one task commits them in batched transactions,
grouping consecutive rows of the same statement into a single ``executemany``.
A batch is committed at most ``flush_interval_s`` after its first row arrived,
so data is durable within a second of arrival.

Real-time callers (the bridge's audio clock) must never wait on disk: they use
the ``*_nowait`` methods, which enqueue beyond the bound instead of waiting.
Their volume is bounded by real time; the bound still slows every awaiting
caller (bots' input), which is where backpressure belongs.

Committing one batch — lock retries, storage failures, bad rows — is
:mod:`vae.recordings.write.batch_commit`. :meth:`BatchWriter.transaction` runs a
caller's short read-modify-write transaction on the same connection, in order
with the rows queued before it, and returns its result. After a storage failure this engine fails
cleanly: every waiting ``flush`` raises, ``failed`` is set, writes waiting
for room and later writes are dropped at once without raising or queueing
(see :mod:`vae.recordings.backends.faults`).

Every row is made storable first (lone surrogates replaced:
:mod:`vae.recordings.write.row_text`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from vae.recordings.backends import faults as writer_faults
from vae.recordings.backends.connection import BUSY_TIMEOUT_MS
from vae.recordings.backends.dialect import Dialect
from vae.recordings.backends.locator import StoreRef, locate
from vae.recordings.backends.writer_conn import Transaction, WriterConnection
from vae.recordings.errors import StorageError, WriterClosedError
from vae.recordings.write.batch_commit import (
    Barrier,
    BatchCommitter,
    Item,
    Row,
    TransactionItem,
    Write,
)
from vae.recordings.write.row_text import clean_row
from vae.recordings.write.writer_start import connect_writer, prepare_store

T = TypeVar("T")

log = logging.getLogger("vae.recordings.writer")


class BatchWriter:
    """Batched, ordered, single-task writer for one store."""

    def __init__(
        self,
        path: StoreRef,
        *,
        max_pending: int = 50_000,
        flush_interval_s: float = 0.2,
        max_batch: int = 20_000,
        lock_timeout_s: float = 120.0,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> None:
        #: Where the store is (``path`` is the same object, kept for older callers).
        self.locator = locate(path)
        self.path = self.locator
        self.lock_timeout_s = lock_timeout_s
        self.busy_timeout_ms = busy_timeout_ms
        #: Set when the writer stopped on a failure (storage, or a bug); ``failure`` says why.
        self.failed = asyncio.Event()
        self._salvage: list[tuple[str, Row]] = []
        self.flush_interval_s = flush_interval_s
        self.max_batch = max_batch
        self.max_pending = max_pending
        # Unbounded underneath: awaiting callers wait for ``_space`` at the bound,
        # ``*_nowait`` callers go past it.
        self._queue: asyncio.Queue[Item] = asyncio.Queue()
        self._space = asyncio.Event()
        self._space.set()
        self._urgent = asyncio.Event()
        self._db: WriterConnection | None = None
        self._committer: BatchCommitter | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._failure: BaseException | None = None

    # ------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        # Migrations run on a plain connection, once, before the writer connects;
        # scorings left running by a dead process are marked interrupted then.
        await asyncio.to_thread(prepare_store, self.locator)
        self._db = await connect_writer(self.locator, busy_timeout_ms=self.busy_timeout_ms)
        self._committer = BatchCommitter(
            self._db,
            lock_timeout_s=self.lock_timeout_s,
            busy_timeout_ms=self.busy_timeout_ms,
            salvage=self._salvage,
        )
        self._task = asyncio.create_task(self._run(), name=f"vae-writer:{self.locator.display()}")

    async def close(self) -> None:
        """Commit everything queued, then stop (after a storage failure: never blocks)."""
        if self._task is None:
            return
        if not self._closing:
            self._closing = True
            if self._failure is None:
                with contextlib.suppress(WriterClosedError):
                    await self.flush()
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            except Exception:
                if self._failure is None:
                    raise
                # A bug stopped the writer: already logged, in ``failure`` and raised to
                # every waiter; closing still closes the connection and salvages.
            self._space.set()
        if self._db is not None:
            db, self._db = self._db, None
            with contextlib.suppress(Exception):
                await asyncio.wait_for(db.close(), 5.0)
        if self._salvage:
            # Emptied in place: the committer holds the same list.
            kept = list(self._salvage)
            self._salvage.clear()
            await asyncio.to_thread(writer_faults.salvage, self.locator, kept)

    @property
    def dialect(self) -> Dialect:
        """The store's dialect: ``dialect.skip_locked`` says how rows are claimed."""
        if self._db is None:
            raise WriterClosedError(f"writer for {self.locator.display()} is not running")
        return self._db.dialect

    @property
    def failure(self) -> BaseException | None:
        return self._failure

    @property
    def rows_written(self) -> int:
        return 0 if self._committer is None else self._committer.rows_written

    @property
    def batches_written(self) -> int:
        return 0 if self._committer is None else self._committer.batches_written

    async def flush(self) -> None:
        """Return once every write submitted before this call is committed."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        await self._put(Barrier(done))
        self._urgent.set()
        await done

    async def transaction(self, work: Callable[[Transaction], Awaitable[T]]) -> T:
        """Run ``work(tx)`` in one transaction on the writer's connection; return its result.

        It runs after every write queued before this call and before any
        queued after it, without waiting for the flush interval. ``work`` must
        be short (it holds up every other write) and must only run statements
        through ``tx``: it is run again from the start while the database is
        locked by another process. Its own exception (or a refused statement)
        rolls the transaction back and is raised here; the writer goes on. A
        storage failure raises :class:`~vae.recordings.errors.StorageError` and
        stops the writer, as for any write. Cancelling the caller does not
        undo a transaction that has started.
        """
        done: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        await self._put(TransactionItem(work, done))
        self._urgent.set()
        return await done

    # ------------------------------------------------------------ submission
    async def execute(self, sql: str, row: Row = ()) -> None:
        """Queue one row of one statement (awaits when the queue is full)."""
        await self._put(Write(sql, clean_row(row)))

    async def executemany(self, sql: str, rows: Sequence[Row]) -> None:
        for row in rows:
            await self._put(Write(sql, clean_row(row)))

    def execute_nowait(self, sql: str, row: Row = ()) -> None:
        """Queue one row without ever waiting (for real-time callers)."""
        self._put_nowait(Write(sql, clean_row(row)))

    async def _put(self, item: Item) -> None:
        # A failure ends the wait: the committer has stopped and frees no more space.
        while self._queue.qsize() >= self.max_pending and self._failure is None:
            self._admit(item)
            self._urgent.set()
            self._space.clear()
            await self._space.wait()
        self._put_nowait(item)

    def _put_nowait(self, item: Item) -> None:
        if not self._admit(item):
            return
        if self._queue.qsize() >= self.max_pending:
            self._urgent.set()
        self._queue.put_nowait(item)

    def _admit(self, item: Item) -> bool:
        """True to enqueue ``item``; False to drop a write after a failure; raises otherwise."""
        if self._failure is not None:
            if isinstance(item, Write):
                # Reported once already and nobody commits any more: drop it, keeping
                # only what salvage() may still record.
                if writer_faults.salvageable(item.sql, item.row):
                    self._salvage.append((item.sql, item.row))
                return False
            stopped = isinstance(self._failure, WriterClosedError)
            raise (WriterClosedError if stopped else StorageError)(str(self._failure))
        if self._task is None or (self._closing and not isinstance(item, Barrier)):
            raise WriterClosedError(f"writer for {self.locator.display()} is not running")
        return True

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    # ------------------------------------------------------------ the loop
    async def _run(self) -> None:
        try:
            while True:
                first = await self._queue.get()
                if isinstance(first, Write) and not self._urgent.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._urgent.wait(), self.flush_interval_s)
                self._urgent.clear()
                batch: list[Item] = [first]
                while len(batch) < self.max_batch:
                    try:
                        batch.append(self._queue.get_nowait())
                    except asyncio.QueueEmpty:
                        break
                if self._queue.qsize() < self.max_pending:
                    self._space.set()
                assert self._committer is not None
                await self._committer.commit_batch(batch)
        except asyncio.CancelledError:
            if not self._closing:
                # Cancelled from outside, not by close(): nothing will commit again, so
                # refuse what comes instead of queueing it for nobody.
                stopped = WriterClosedError(f"writer for {self.locator.display()} was cancelled")
                self._failure = stopped
                self._fail_waiters(stopped)
                self.failed.set()
            raise
        except StorageError as exc:
            log.error("%s", exc)
            self._failure = exc
            self._fail_waiters(exc)
            self.failed.set()
        except BaseException as exc:  # pragma: no cover - defensive: report, then fail loudly
            log.exception("writer for %s failed", self.locator.display())
            self._failure = exc
            self._fail_waiters(exc)
            self.failed.set()
            raise

    def _fail_waiters(self, exc: BaseException) -> None:
        self._space.set()
        while True:
            try:
                item = self._queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if isinstance(item, Barrier | TransactionItem) and not item.done.done():
                item.done.set_exception(
                    exc if isinstance(exc, StorageError) else WriterClosedError(str(exc))
                )
            elif isinstance(item, Write) and writer_faults.salvageable(item.sql, item.row):
                self._salvage.append((item.sql, item.row))
