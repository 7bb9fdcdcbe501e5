"""Scoring a rescore's sessions on Ray: batches fanned out as tasks, results streamed back.

Why a module: this is the coordinator's side of a Ray rescore — how the
sessions are cut into tasks, submitted, followed and, when a task fails,
accounted for. The rescore's lifecycle stays in :mod:`vae.scorer_service.scoring.rescore`
(it creates the scoring, builds the summary from the outcomes handed to it
and closes the scoring exactly as for a local rescore); the task body is
:mod:`vae.scorer_service.ray_scoring.task`; connecting is
:mod:`vae.scorer_service.ray_scoring.connect`.

Batching: the plan's sessions (in scenario order, so the trials of one
scenario share a task and its judge's memory) are cut into consecutive
batches. A task scores its batch as a local rescore would, ``c`` sessions
at once (the judge's concurrency: a session mostly waits on the judge, not
the CPU), and costs a store connection, readers, a writer and a judge
client to set up (a few hundred ms on a loaded 2-core machine), so a batch
holds about four rounds of ``c`` sessions when the run is large enough —
but never so many that a CPU of the cluster gets no task — and the run is
cut into about :data:`TASKS_PER_CPU` tasks per CPU when it is larger still,
which evens out uneven sessions and bounds what one failed task loses (at
most :data:`MAX_BATCH` sessions). Each task takes one CPU. Tasks are not
retried (``max_retries=0``): a failed task's unreported sessions are
recorded ``unscored`` (cause ``ray_task_failed``,
:mod:`vae.scorer_service.ray_scoring.task_failure`), after any rows it left for them are
removed — rescore again to judge them (cached judge replies cost nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from vae.recordings.errors import StoreError
from vae.recordings.write.writer import RecordingWriter
from vae.scorer_service.judge.client import JudgeUnusableError
from vae.scorer_service.ray_scoring.connect import (
    RayConnection,
    RayScoringError,
    connect,
    require_ray,
)
from vae.scorer_service.ray_scoring.task import (
    BatchPayload,
    BatchStopped,
    SessionDone,
    code_id,
    leaf_error,
    score_batch,
)
from vae.scorer_service.ray_scoring.task_failure import failed_outcome
from vae.scorer_service.scoring.runner import (
    Emit,
    Planned,
    ScoringJob,
    WorkStats,
    session_concurrency,
)

log = logging.getLogger("vae.scorer.ray")

#: The most sessions one task scores.
MAX_BATCH = 50
#: Tasks per cluster CPU the batch size aims at.
TASKS_PER_CPU = 4
#: The name of every task (and so of its worker's process title, ``ray::vae-score``).
TASK_NAME = "vae-score"


#: Rounds of ``concurrency`` sessions a task is given when the run is large enough.
ROUNDS_PER_TASK = 4


def batch_size(n: int, cpus: int, concurrency: int) -> int:
    """Sessions per task (the module doc says why)."""
    enough = min(concurrency * ROUNDS_PER_TASK, math.ceil(n / cpus))
    return max(1, min(MAX_BATCH, max(enough, math.ceil(n / (cpus * TASKS_PER_CPU)))))


def plan_batches(sessions: Sequence[Planned], size: int) -> list[list[Planned]]:
    return [list(sessions[i : i + size]) for i in range(0, len(sessions), size)]


def portable_locator(locator: str) -> str:
    """The store's locator as a worker (maybe in another folder) must be given it."""
    return locator if "://" in locator else os.path.abspath(locator)


def describe_failure(exc: BaseException) -> str:
    """What failed, in one line: the task's own exception, or Ray's (a worker that died)."""
    cause = getattr(exc, "cause", None)  # RayTaskError: what the task raised
    error = cause if isinstance(cause, BaseException) else exc
    text = str(error).strip().splitlines()
    where = ""
    if error is cause and getattr(exc, "pid", None):
        where = f" (worker pid {exc.pid} on {getattr(exc, 'ip', '?')})"  # type: ignore[attr-defined]
    return f"{type(error).__name__}: {text[0] if text else ''}{where}"


def stopped_error(item: BatchStopped) -> Exception:
    """The error a task's stop raises here, as the same failure would locally."""
    if item.kind == "judge_unusable":
        return JudgeUnusableError(item.message)
    if item.kind == "store":
        return StoreError(item.message)
    return RayScoringError(item.message)


class RayRunner:
    """Scores the sessions of a rescore as Ray tasks (the module doc says how).

    Use it as a context manager around the rescores that use it: it connects
    on the first one (before the scoring is created, so a bad address writes
    nothing) and shuts down a Ray instance it started when it exits.
    """

    def __init__(
        self, address: str = "auto", *, batch: int | None = None, num_cpus: int | None = None
    ) -> None:
        self.address = address
        self.batch = batch
        self.num_cpus = num_cpus
        self.connection: RayConnection | None = None

    def __enter__(self) -> RayRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def connect(self) -> None:
        """Connect now (a service does it once, at startup); blocking, in the main thread."""
        if self.connection is None:
            self.connection = connect(self.address, num_cpus=self.num_cpus)

    async def prepare(self) -> None:
        # ray.init wants the main thread (it installs a signal handler): it blocks here.
        self.connect()

    async def run(
        self, job: ScoringJob, sessions: Sequence[Planned], writer: RecordingWriter, emit: Emit
    ) -> WorkStats:
        await self.prepare()
        assert self.connection is not None
        ray = require_ray()
        remote = ray.remote(num_returns="streaming", max_retries=0)(score_batch)
        concurrency = session_concurrency(job.config)
        size = self.batch or batch_size(len(sessions), self.connection.cpus, concurrency)
        batches = plan_batches(sessions, size)
        job = replace(job, locator=portable_locator(job.locator))
        log.info(
            "scoring %d session(s) on Ray at %s: %d task(s) of up to %d",
            len(sessions), self.address, len(batches), size,
        )  # fmt: skip
        total = WorkStats()
        code = code_id()
        try:
            async with asyncio.TaskGroup() as tg:
                for batch in batches:
                    payload = BatchPayload(job, batch, concurrency, code)
                    tg.create_task(self._follow(remote, payload, writer, emit, total))
        except BaseExceptionGroup as group:  # one clear error: what stopped the first task
            raise leaf_error(group) from None
        return total

    async def _follow(
        self, remote: Any, payload: BatchPayload, writer: RecordingWriter, emit: Emit,
        total: WorkStats,
    ) -> None:  # fmt: skip
        """Submit one batch, hand on each session it reports, account for the rest."""
        ray = require_ray()
        pending = {
            session.session_id: (session, scenario) for session, scenario in payload.sessions
        }
        failure = ""
        stream = remote.options(name=TASK_NAME).remote(payload)
        try:
            async for ref in stream:
                item = await ref
                if isinstance(item, BatchStopped):
                    raise stopped_error(item)
                assert isinstance(item, SessionDone)
                pending.pop(item.outcome.session_id, None)
                total.add(item.stats)
                await emit(item.outcome)
        except ray.exceptions.RayError as exc:  # the task raised, or its worker/node died
            failure = describe_failure(exc)
        finally:
            if pending and not failure:  # cancelled, or another error: stop the task too
                with contextlib.suppress(Exception):
                    ray.cancel(stream)
        if pending and not failure:
            failure = "the task ended without reporting these sessions"
        if pending:
            log.warning("a Ray task failed; %d session(s) unscored: %s", len(pending), failure)
        scoring_id = payload.job.scoring_id
        for session, scenario in pending.values():
            outcome = failed_outcome(scoring_id, session, scenario, failure)
            await writer.delete_session_scores(scoring_id, session.session_id)
            await writer.add_scores(outcome.scores)
            await emit(outcome)
