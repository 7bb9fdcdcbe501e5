"""The single writer of a store file.

Every write in a process goes through one :class:`RecordingWriter` per file
(see :func:`open_writer`): callers enqueue rows on a bounded queue (awaiting
when it is full — backpressure, never loss), and one task commits them in
batched transactions, grouping consecutive rows of the same statement into a
single ``executemany``. A batch is committed at most ``flush_interval_s`` after
its first row arrived, so data is durable within a second of arrival.

Real-time callers (the bridge's audio clock) must never wait on disk: they use
the ``*_nowait`` methods, which enqueue beyond the bound instead of waiting.
Their volume is bounded by real time; the bound still slows every awaiting
caller (bots' input), which is where backpressure belongs.

A database locked by another process is waited on (SQLite's busy timeout,
then retries with backoff); the batch is kept until it commits, up to
``lock_timeout_s``. Storage failures (disk full, I/O error, the file deleted
or read-only, a lock held beyond the timeout) fail the writer cleanly:
see :mod:`recordings.writer_faults`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

from recordings import writer_faults
from recordings.connection import BUSY_TIMEOUT_MS, open_database
from recordings.errors import StorageError, WriterClosedError
from recordings.models import (
    ArtifactRecord,
    EventRecord,
    FinalStateRecord,
    RunRecord,
    RunScenario,
    ScoreRecord,
    ScoringRecord,
    SegmentRecord,
    SessionRecord,
)
from recordings.scoring_owner import mark_interrupted

log = logging.getLogger("vae.recordings.writer")

Row = tuple[Any, ...]


@dataclass(slots=True)
class _Write:
    sql: str
    row: Row


@dataclass(slots=True)
class _Barrier:
    done: asyncio.Future[None]


_Item = _Write | _Barrier


def dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


class RecordingWriter:
    """Batched, ordered, single-task writer for one SQLite file."""

    def __init__(
        self,
        path: str | Path,
        *,
        max_pending: int = 50_000,
        flush_interval_s: float = 0.2,
        max_batch: int = 20_000,
        lock_timeout_s: float = 120.0,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> None:
        self.path = Path(path)
        self.lock_timeout_s = lock_timeout_s
        self.busy_timeout_ms = busy_timeout_ms
        #: Set when storage failed; ``failure`` says why.
        self.failed = asyncio.Event()
        self._salvage: list[_Write] = []
        self._identity: tuple[int, int] | None = None
        self.flush_interval_s = flush_interval_s
        self.max_batch = max_batch
        self.max_pending = max_pending
        # Unbounded underneath: awaiting callers wait for ``_space`` at the bound,
        # ``*_nowait`` callers go past it.
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._space = asyncio.Event()
        self._space.set()
        self._urgent = asyncio.Event()
        self._db: aiosqlite.Connection | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._failure: BaseException | None = None
        self.rows_written = 0
        self.batches_written = 0

    # ------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        # Migrations run on a plain connection, once, before the writer connects;
        # scorings left running by a dead process are marked interrupted then.
        await asyncio.to_thread(_prepare, self.path)
        self._db = await aiosqlite.connect(self.path, isolation_level=None)
        await self._db.execute(f"PRAGMA busy_timeout = {self.busy_timeout_ms}")
        await self._db.execute("PRAGMA journal_mode = WAL")
        await self._db.execute("PRAGMA synchronous = NORMAL")
        self._identity = writer_faults.file_identity(self.path)
        self._task = asyncio.create_task(self._run(), name=f"vae-writer:{self.path.name}")

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
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._space.set()
        if self._db is not None:
            db, self._db = self._db, None
            with contextlib.suppress(Exception):
                await asyncio.wait_for(db.close(), 5.0)
        if self._salvage:
            kept, self._salvage = self._salvage, []
            await asyncio.to_thread(
                writer_faults.salvage, self.path, [(w.sql, w.row) for w in kept]
            )

    @property
    def failure(self) -> BaseException | None:
        return self._failure

    async def flush(self) -> None:
        """Return once every write submitted before this call is committed."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        await self._put(_Barrier(done))
        self._urgent.set()
        await done

    # ------------------------------------------------------------ submission
    async def execute(self, sql: str, row: Row = ()) -> None:
        """Queue one row of one statement (awaits when the queue is full)."""
        await self._put(_Write(sql, row))

    async def executemany(self, sql: str, rows: Sequence[Row]) -> None:
        for row in rows:
            await self._put(_Write(sql, row))

    def execute_nowait(self, sql: str, row: Row = ()) -> None:
        """Queue one row without ever waiting (for real-time callers)."""
        self._put_nowait(_Write(sql, row))

    async def _put(self, item: _Item) -> None:
        while self._queue.qsize() >= self.max_pending:
            self._check_open(item)
            self._urgent.set()
            self._space.clear()
            await self._space.wait()
        self._put_nowait(item)

    def _put_nowait(self, item: _Item) -> None:
        self._check_open(item)
        if self._queue.qsize() >= self.max_pending:
            self._urgent.set()
        self._queue.put_nowait(item)

    def _check_open(self, item: _Item) -> None:
        if self._failure is not None:
            if isinstance(item, _Write):
                # Reported once already; keep only what salvage() may still record.
                if writer_faults.salvageable(item.sql):
                    self._salvage.append(item)
                return
            raise StorageError(str(self._failure))
        if self._task is None or (self._closing and not isinstance(item, _Barrier)):
            raise WriterClosedError(f"writer for {self.path} is not running")

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    # ------------------------------------------------------------ the loop
    async def _run(self) -> None:
        try:
            while True:
                first = await self._queue.get()
                if not isinstance(first, _Barrier) and not self._urgent.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._urgent.wait(), self.flush_interval_s)
                self._urgent.clear()
                batch: list[_Item] = [first]
                while len(batch) < self.max_batch:
                    try:
                        batch.append(self._queue.get_nowait())
                    except asyncio.QueueEmpty:
                        break
                if self._queue.qsize() < self.max_pending:
                    self._space.set()
                await self._commit(batch)
        except asyncio.CancelledError:
            raise
        except StorageError as exc:
            log.error("%s", exc)
            self._failure = exc
            self._fail_waiters(exc)
            self.failed.set()
        except BaseException as exc:  # pragma: no cover - defensive: report, then fail loudly
            log.exception("writer for %s failed", self.path)
            self._failure = exc
            self._fail_waiters(exc)
            raise

    def _fail_waiters(self, exc: BaseException) -> None:
        self._space.set()
        while True:
            try:
                item = self._queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if isinstance(item, _Barrier) and not item.done.done():
                item.done.set_exception(
                    exc if isinstance(exc, StorageError) else WriterClosedError(str(exc))
                )
            elif isinstance(item, _Write) and writer_faults.salvageable(item.sql):
                self._salvage.append(item)

    async def _commit(self, batch: list[_Item]) -> None:
        groups: list[tuple[str, list[Row]]] = []
        barriers: list[_Barrier] = []
        for item in batch:
            if isinstance(item, _Barrier):
                barriers.append(item)
            elif groups and groups[-1][0] == item.sql:
                groups[-1][1].append(item.row)
            else:
                groups.append((item.sql, [item.row]))
        if groups:
            try:
                await self._commit_groups(groups)
            except StorageError as exc:
                for barrier in barriers:
                    if not barrier.done.done():
                        barrier.done.set_exception(exc)
                raise
        for barrier in barriers:
            if not barrier.done.done():
                barrier.done.set_result(None)

    async def _commit_groups(self, groups: list[tuple[str, list[Row]]]) -> None:
        db = self._db
        assert db is not None
        attempt = 0
        waited = 0.0
        while True:
            if writer_faults.file_identity(self.path) != self._identity:
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

    def _keep_salvageable(self, groups: list[tuple[str, list[Row]]]) -> None:
        for sql, rows in groups:
            if writer_faults.salvageable(sql):
                self._salvage.extend(_Write(sql, row) for row in rows)

    async def _commit_rows_one_by_one(
        self, groups: list[tuple[str, list[Row]]], cause: BaseException
    ) -> None:
        """A row broke the batch: keep every good row, log each bad one."""
        log.error("batch failed (%s); committing row by row", cause)
        db = self._db
        assert db is not None
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
        assert self._db is not None
        with contextlib.suppress(sqlite3.Error):
            await self._db.execute("ROLLBACK")

    # ------------------------------------------------------------ typed writes
    async def create_run(self, run: RunRecord) -> None:
        await self.execute(
            "INSERT INTO runs (run_id, created_ns, finished_ns, status, options_json,"
            " vae_version, tags_json, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.run_id,
                run.created_ns,
                run.finished_ns,
                str(run.status),
                dumps(run.options),
                run.vae_version,
                dumps(run.tags),
                run.source,
            ),
        )

    async def update_run_status(
        self, run_id: str, status: str, finished_ns: int | None = None, error: str = ""
    ) -> None:
        await self.execute(
            "UPDATE runs SET status = ?, finished_ns = ?, error = ? WHERE run_id = ?",
            (str(status), finished_ns, error, run_id),
        )

    async def add_run_scenarios(self, scenarios: Sequence[RunScenario]) -> None:
        await self.executemany(
            "INSERT OR IGNORE INTO run_scenarios (run_id, scenario_name, ordinal, domain,"
            " scenario_json) VALUES (?, ?, ?, ?, ?)",
            [
                (s.run_id, s.scenario_name, s.ordinal, s.domain, dumps(s.scenario))
                for s in scenarios
            ],
        )

    async def start_session(self, s: SessionRecord) -> None:
        await self.execute(
            "INSERT INTO sessions (session_id, run_id, scenario_name, attempt, status,"
            " started_ns, user_bot_json, agent_bot_json, audio_json, retry_reason)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                s.session_id,
                s.run_id,
                s.scenario_name,
                s.attempt,
                str(s.status),
                s.started_ns,
                dumps(s.user_bot),
                dumps(s.agent_bot),
                dumps(s.audio),
                s.retry_reason,
            ),
        )

    async def update_session_info(
        self,
        session_id: str,
        *,
        user_bot: dict[str, object],
        agent_bot: dict[str, object],
        audio: dict[str, object],
    ) -> None:
        await self.execute(
            "UPDATE sessions SET user_bot_json = ?, agent_bot_json = ?, audio_json = ?"
            " WHERE session_id = ?",
            (dumps(user_bot), dumps(agent_bot), dumps(audio), session_id),
        )

    async def end_session(
        self,
        session_id: str,
        *,
        ended_ns: int,
        stop_reason: str,
        stop_detail: str = "",
        clean_exit: bool | None,
        user_turns: int,
        agent_turns: int,
    ) -> None:
        await self.execute(
            "UPDATE sessions SET status = 'ended', ended_ns = ?, stop_reason = ?,"
            " stop_detail = ?, clean_exit = ?, user_turns = ?, agent_turns = ?"
            " WHERE session_id = ?",
            (
                ended_ns,
                stop_reason,
                stop_detail,
                None if clean_exit is None else int(clean_exit),
                user_turns,
                agent_turns,
                session_id,
            ),
        )

    async def mark_superseded(self, session_id: str, reason: str) -> None:
        await self.execute(
            "UPDATE sessions SET status = 'superseded', superseded_reason = ? WHERE session_id = ?",
            (reason, session_id),
        )

    async def add_segment(self, seg: SegmentRecord) -> None:
        await self.execute(_SEGMENT_SQL, _segment_row(seg))

    def add_segment_nowait(self, seg: SegmentRecord) -> None:
        """Queue a segment without waiting (the bridge's audio clock)."""
        self.execute_nowait(_SEGMENT_SQL, _segment_row(seg))

    async def put_session_clock(self, session_id: str, clock: dict[str, object]) -> None:
        """Record how late a session's clock ticked and its audio arrived."""
        await self.execute(
            "UPDATE sessions SET clock_json = ? WHERE session_id = ?", (dumps(clock), session_id)
        )

    async def add_events(self, events: Sequence[EventRecord]) -> None:
        await self.executemany(
            "INSERT INTO events (session_id, side, kind, bridge_ns, bot_ns, payload_json)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (e.session_id, str(e.side), str(e.kind), e.bridge_ns, e.bot_ns, dumps(e.payload))
                for e in events
            ],
        )

    async def put_final_state(self, fs: FinalStateRecord) -> None:
        await self.execute(
            "INSERT OR REPLACE INTO final_states (session_id, side, received_ns, state_json,"
            " state_hash, context_json) VALUES (?, ?, ?, ?, ?, ?)",
            (
                fs.session_id,
                str(fs.side),
                fs.received_ns,
                None if fs.state is None else dumps(fs.state),
                fs.state_hash,
                None if fs.context is None else dumps(fs.context),
            ),
        )

    async def create_scoring(self, sc: ScoringRecord) -> None:
        await self.execute(
            "INSERT INTO scorings (scoring_id, run_id, created_ns, status, mode, config_json,"
            " versions_json, judge_model, prompt_hash, summary_json)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                sc.scoring_id,
                sc.run_id,
                sc.created_ns,
                sc.status,
                sc.mode,
                dumps(sc.config),
                dumps(sc.versions),
                sc.judge_model,
                sc.prompt_hash,
                dumps(sc.summary),
            ),
        )

    async def add_scores(self, scores: Sequence[ScoreRecord]) -> None:
        await self.executemany(
            "INSERT OR REPLACE INTO scores (scoring_id, session_id, signal, verdict, value,"
            " passed, detail_json, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    s.scoring_id,
                    s.session_id,
                    s.signal,
                    str(s.verdict),
                    s.value,
                    None if s.passed is None else int(s.passed),
                    dumps(s.detail),
                    s.error,
                )
                for s in scores
            ],
        )

    async def finish_scoring(
        self, scoring_id: str, *, status: str, summary: dict[str, object], finished_ns: int
    ) -> None:
        await self.execute(
            "UPDATE scorings SET status = ?, summary_json = ?, finished_ns = ?"
            " WHERE scoring_id = ?",
            (status, dumps(summary), finished_ns, scoring_id),
        )

    async def supersede_scorings(self, run_id: str, new_scoring_id: str) -> None:
        """Mark the run's current scorings superseded by ``new_scoring_id`` (never deletes)."""
        await self.execute(
            "UPDATE scorings SET superseded_by = ? WHERE run_id = ? AND scoring_id != ?"
            " AND superseded_by IS NULL",
            (new_scoring_id, run_id, new_scoring_id),
        )

    async def put_judge_cache(
        self, cache_key: str, model: str, request: object, response: object
    ) -> None:
        await self.execute(
            "INSERT OR REPLACE INTO judge_cache (cache_key, model, request_json, response_json,"
            " created_ns) VALUES (?, ?, ?, ?, ?)",
            (cache_key, model, dumps(request), dumps(response), time.time_ns()),
        )

    async def add_artifact(self, art: ArtifactRecord) -> None:
        await self.execute(
            "INSERT INTO artifacts (run_id, session_id, name, content) VALUES (?, ?, ?, ?)",
            (art.run_id, art.session_id, art.name, art.content),
        )


def _prepare(path: Path) -> None:
    conn = open_database(path)
    try:
        marked = mark_interrupted(conn)
        if marked:
            log.warning("scorings left running by a process that died: %s (interrupted)", marked)
    finally:
        conn.close()


_SEGMENT_SQL = (
    "INSERT INTO audio_segments (session_id, channel, seq, start_offset, sample_count,"
    " sample_rate, first_arrival_ns, frames, pcm) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _segment_row(seg: SegmentRecord) -> Row:
    return (
        seg.session_id,
        str(seg.channel),
        seg.seq,
        seg.start_offset,
        seg.sample_count,
        seg.sample_rate,
        seg.first_arrival_ns,
        seg.frames,
        seg.pcm,
    )


# ---------------------------------------------------------------- one per file
_writers: dict[tuple[int, str], tuple[RecordingWriter, int]] = {}


@contextlib.asynccontextmanager
async def open_writer(path: str | Path, **options: Any) -> AsyncIterator[RecordingWriter]:
    """The process's writer for ``path``: shared by everyone in this event loop.

    The first user starts it; the last one out flushes and closes it.
    """
    # abspath only joins with the cwd: no I/O worth a thread here.
    key = (id(asyncio.get_running_loop()), os.path.abspath(path))  # noqa: ASYNC240
    if key in _writers:
        writer, users = _writers[key]
        _writers[key] = (writer, users + 1)
    else:
        writer = RecordingWriter(path, **options)
        await writer.start()
        _writers[key] = (writer, 1)
    try:
        yield writer
    finally:
        writer, users = _writers[key]
        if users <= 1:
            del _writers[key]
            await writer.close()
        else:
            _writers[key] = (writer, users - 1)
