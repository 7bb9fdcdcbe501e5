"""Scoring sessions into a scoring that already exists: the work per session, wherever it runs.

Why a module: a rescore's lifecycle — plan, create the scoring, summarise,
close it (:mod:`vae.scorer_service.scoring.rescore`) — changes with the ledger's rules;
scoring one session — load its context, run every scorer, derive the
composites, append the scores — changes with what a session is scored on.
That per-session work runs in the rescoring process (:class:`LocalRunner`)
or in a Ray worker (:mod:`vae.scorer_service.ray_scoring.task`) through this very code,
which is why a Ray rescore equals a local one. A :class:`SessionWorker` holds
what the work needs in one process: readers, the process's writer of the
store, the judge client (its cache is the store's ``judge_cache`` table, so
every process shares it) and the scorers. What a runner is given and returns
is :mod:`vae.scorer_service.scoring.runner`'s. A scoring's transcription stage
(``vae rescore --transcribe``) is part of each session's work, so it runs
wherever the session is scored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, TypeVar

from vae.recordings.errors import StorageError
from vae.recordings.models import ScoreRecord, SessionRecord, Verdict
from vae.recordings.read.reader import RecordingReader
from vae.recordings.scenarios.model import Scenario
from vae.recordings.write.writer import RecordingWriter, open_writer
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.context_load import load_context
from vae.scorer_service.judge.client import JudgeClient, JudgeStats, JudgeUnusableError
from vae.scorer_service.ledger.aggregate import SessionOutcome
from vae.scorer_service.scorer import Scorer, SignalScore
from vae.scorer_service.scoring.lacking import declared_lacks
from vae.scorer_service.scoring.redacted import note_redaction, redact_context
from vae.scorer_service.scoring.registry import build_scorers
from vae.scorer_service.scoring.runner import (
    Emit,
    Planned,
    ScoringJob,
    WorkStats,
    session_concurrency,
)
from vae.scorer_service.scoring.session_passes import finish
from vae.scorer_service.transcription.stage import CHANNELS, TranscriptionStage, make_stage
from vae.scorer_service.transcription.words import rebuild_conversation

T = TypeVar("T")

log = logging.getLogger("vae.scorer.rescore")


async def _score_signals(
    scorers: list[Scorer], ctx: ScoringContext, lacks: set[str], reads_conversation: bool
) -> list[SignalScore]:
    results: list[SignalScore] = []
    for scorer in scorers:
        try:
            results.extend(await scorer.score(ctx))
        except JudgeUnusableError:
            raise  # stops the rescore: the scoring is recorded failed
        except Exception as exc:  # a scorer bug must not lose the other scores
            log.exception("scorer %s failed on %s", scorer.name, ctx.session.session_id)
            results.append(
                SignalScore(
                    f"scorer.{scorer.name}",
                    Verdict.UNSCORED,
                    None,
                    {},
                    f"scorer {scorer.name} crashed: {exc!r}",
                )
            )
    # What the recording lacks, a text session's audio-only signals, transcription
    # holes, mishearing, composites (vae.scorer_service.scoring.session_passes).
    return finish(note_redaction(results), ctx, lacks, reads_conversation=reads_conversation)


class SessionWorker:
    """Scores sessions of one scoring in this process (see :func:`open_worker`)."""

    def __init__(
        self,
        job: ScoringJob,
        pool: asyncio.Queue[RecordingReader],
        readers: _Readers,
        writer: RecordingWriter,
        scorers: list[Scorer],
        judge: JudgeClient | None,
        stage: TranscriptionStage | None = None,
    ) -> None:
        self.job = job
        self.stage = stage
        self.pool = pool
        self.readers = readers
        self.writer = writer
        self.scorers = scorers
        self.judge = judge
        self.concurrency = max(1, pool.qsize())

    @property
    def stats(self) -> WorkStats:
        """What this process used so far (a copy)."""
        judge = self.judge.stats if self.judge is not None else JudgeStats()
        asr = self.stage.counts() if self.stage is not None else {}
        return WorkStats(JudgeStats(judge.requests, judge.cache_hits, judge.errors), asr)

    async def score(self, session: SessionRecord, scenario: Scenario) -> SessionOutcome:
        """Score one session and queue its scores on the writer."""
        job = self.job
        reader = await self.pool.get()
        try:
            ctx = await self.readers.call(
                reader,
                load_context,
                reader,
                session,
                scenario,
                job.config,
                job.run_options,
                with_audio=job.with_audio,
                channels=CHANNELS if self.stage is not None else CHANNELS[:2],
            )
        finally:
            self.pool.put_nowait(reader)
        if self.stage is not None:  # a stage of this session's scoring: it runs where this does
            await self.writer.add_transcripts(await self.stage.run(ctx, job.scoring_id))
            rebuild_conversation(ctx, job.config.transcription.transcripts)
        ctx = await asyncio.to_thread(redact_context, ctx, job.config)  # --redact: the judge
        lacks = declared_lacks(job.run_options)
        include = job.config.judge.include_conversation
        results = await _score_signals(self.scorers, ctx, lacks, include)
        sid = session.session_id
        records = [
            ScoreRecord(job.scoring_id, sid, r.signal, r.verdict, r.value, r.detail, r.error)
            for r in results
        ]
        if self.writer.failure is not None:
            raise StorageError(f"scoring stopped: {self.writer.failure}")
        await self.writer.add_scores(records)
        return SessionOutcome(
            session.session_id, session.scenario_name, scenario.domain, session.duration_s, records
        )

    async def score_all(self, sessions: Sequence[Planned], emit: Emit) -> None:
        """Score every session, ``concurrency`` at a time; ``emit`` each as it is queued."""
        limit = asyncio.Semaphore(self.concurrency)

        async def one(session: SessionRecord, scenario: Scenario) -> None:
            async with limit:
                await emit(await self.score(session, scenario))

        async with asyncio.TaskGroup() as tg:
            for session, scenario in sessions:
                tg.create_task(one(session, scenario))


class _Readers:
    """The worker's reader connections, each used by one thread at a time.

    A scoring that is cancelled (a failing session cancels its siblings) stops
    awaiting its thread, but the thread runs on: closing its SQLite connection
    under it crashed the process (a segfault in ``load_context``). Every call
    on a reader runs under that reader's lock, and closing takes the lock, so
    a connection is closed only once its last call has returned.
    """

    def __init__(self) -> None:
        self.opened: list[RecordingReader] = []
        self._locks: dict[int, threading.Lock] = {}

    async def open(self, locator: str) -> RecordingReader:
        reader = await asyncio.to_thread(RecordingReader, locator)
        self._locks[id(reader)] = threading.Lock()
        self.opened.append(reader)
        return reader

    async def call(self, reader: RecordingReader, fn: Callable[..., T], *args: Any, **kw: Any) -> T:
        lock = self._locks[id(reader)]

        def locked() -> T:
            with lock:
                return fn(*args, **kw)

        return await asyncio.to_thread(locked)

    def close(self) -> None:
        for reader in self.opened:
            with self._locks[id(reader)]:  # waits for a call still running in its thread
                reader.close()


@contextlib.asynccontextmanager
async def _readers(locator: str, n: int) -> AsyncIterator[_Readers]:
    readers = _Readers()
    try:
        for _ in range(n):
            await readers.open(locator)
        yield readers
    finally:
        readers.close()


@contextlib.asynccontextmanager
async def open_worker(job: ScoringJob, concurrency: int) -> AsyncIterator[SessionWorker]:
    """Readers, this process's writer, the judge (cache in the store) and the scorers."""
    async with _readers(job.locator, concurrency + 1) as readers:
        cache_reader, *rest = readers.opened
        pool: asyncio.Queue[RecordingReader] = asyncio.Queue()
        for r in rest:
            pool.put_nowait(r)

        async def cache_get(key: str) -> Any:
            return await readers.call(cache_reader, cache_reader.judge_cache_get, key)

        async def transcription_get(key: str) -> str | None:
            return await readers.call(cache_reader, cache_reader.transcription_cache_get, key)

        async with open_writer(job.locator) as writer:

            async def cache_put(
                key: str, model: str, req: dict[str, Any], res: dict[str, Any]
            ) -> None:
                await writer.put_judge_cache(key, model, req, res)

            settings = job.config.judge
            judge = JudgeClient(settings, cache_get, cache_put) if settings.enabled else None
            stage = make_stage(job.config.transcription, transcription_get, writer)
            try:
                scorers = build_scorers(job.config, judge)
                yield SessionWorker(job, pool, readers, writer, scorers, judge, stage)
            finally:
                if judge is not None:
                    await judge.close()
                if stage is not None:
                    await stage.close()


class LocalRunner:
    """The default runner: every session is scored in this process."""

    def __init__(self, concurrency: int | None = None) -> None:
        self.concurrency = concurrency

    async def prepare(self) -> None:
        return None

    async def run(
        self, job: ScoringJob, sessions: Sequence[Planned], writer: RecordingWriter, emit: Emit
    ) -> WorkStats:
        del writer  # the worker opens this process's writer of the store: the same one
        concurrency = self.concurrency or session_concurrency(job.config)
        async with open_worker(job, concurrency) as worker:
            await worker.score_all(sessions, emit)
            return worker.stats
