"""The Ray task of a rescore: score a batch of sessions in a worker, reporting each as it is stored.

Why a module: this is the only code that runs inside a Ray worker, and it
must stay importable there without Ray-specific state (it imports no
``ray``: the coordinator, :mod:`vae.scorer_service.ray_scoring.runner`, wraps
:func:`score_batch` with ``ray.remote``). A task opens the store itself —
one writer per store per process, as everywhere — and scores its sessions
with :mod:`vae.scorer_service.scoring.session_work`, the code a local rescore runs, so
the results are the same.

:func:`score_batch` is a generator: Ray streams each :class:`SessionDone` to
the coordinator as soon as that session's scores are committed, which is
what drives the progress bar and tells the coordinator which sessions a
task that then fails had already finished. What stops the whole rescore
(as it would locally) is reported as a :class:`BatchStopped` instead of
raised: a judge that cannot be used, a store this worker cannot open or
write, code that differs from the caller's. Anything else the task raises,
or the death of its worker, leaves its unreported sessions ``unscored``
(:mod:`vae.scorer_service.ray_scoring.task_failure`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from vae import recordings, scorer_service
from vae.recordings.errors import StoreError
from vae.scorer_service.judge.client import JudgeUnusableError
from vae.scorer_service.ledger.aggregate import SessionOutcome
from vae.scorer_service.scoring.runner import Planned, ScoringJob, WorkStats
from vae.scorer_service.scoring.session_work import SessionWorker, open_worker

#: The packages a task imports from vae: shipped to the workers, fingerprinted.
TASK_PACKAGES = (recordings, scorer_service)


@dataclass
class BatchPayload:
    job: ScoringJob
    sessions: list[Planned]
    #: Sessions scored at once in the task (as a local rescore would).
    concurrency: int
    #: :func:`code_id` of the caller: a worker running other code refuses.
    code: str


@dataclass
class SessionDone:
    """One session scored and committed; ``stats``: what was used since the last one."""

    outcome: SessionOutcome
    stats: WorkStats


@dataclass
class BatchStopped:
    """Why the task stopped the rescore: ``judge_unusable``, ``store`` or ``code``."""

    kind: str
    message: str


def package_dirs() -> list[str]:
    return [str(Path(p.__file__ or "").parent) for p in TASK_PACKAGES]


@functools.cache
def code_id() -> str:
    """A fingerprint of the Python sources of :data:`TASK_PACKAGES` as this process imports them."""
    digest = hashlib.sha256()
    for root in map(Path, package_dirs()):
        for path in sorted(root.rglob("*.py")):
            digest.update(f"{root.name}/{path.relative_to(root).as_posix()}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def leaf_error(exc: BaseException) -> BaseException:
    """The first error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


async def _score(payload: BatchPayload, worker: SessionWorker, out: asyncio.Queue[object]) -> None:
    seen = WorkStats()

    async def emit(outcome: SessionOutcome) -> None:
        nonlocal seen
        await worker.writer.flush()  # committed before it is reported
        now = worker.stats
        await out.put(SessionDone(outcome, now.since(seen)))
        seen = now

    await worker.score_all(payload.sessions, emit)


async def _main(payload: BatchPayload, out: asyncio.Queue[object]) -> None:
    host = socket.gethostname()
    try:
        if payload.code != code_id():
            message = (
                f"the Ray worker on {host} runs other vae code ({', '.join(package_dirs())}) "
                "than the rescoring process; install the same vae version there"
            )
            await out.put(BatchStopped("code", message))
            return
        async with contextlib.AsyncExitStack() as stack:
            try:
                worker = await stack.enter_async_context(
                    open_worker(payload.job, payload.concurrency)
                )
            except (StoreError, OSError) as exc:
                message = (
                    f"the Ray worker on {host} cannot open the store {payload.job.locator}: "
                    f"{exc}; a Ray cluster of several machines needs a store every node reaches"
                )
                await out.put(BatchStopped("store", message))
                return
            try:
                await _score(payload, worker, out)
            except BaseException as exc:
                error = leaf_error(exc)
                if isinstance(error, JudgeUnusableError):
                    await out.put(BatchStopped("judge_unusable", str(error)))
                elif isinstance(error, StoreError):
                    await out.put(BatchStopped("store", f"on {host}: {error}"))
                else:
                    raise error from None
    finally:
        await out.put(None)


async def _finish(main: asyncio.Task[None]) -> None:
    await main


def score_batch(payload: BatchPayload) -> Iterator[SessionDone | BatchStopped]:
    """The task body: yield each session's result as it is committed (see the module doc)."""
    with asyncio.Runner() as runner:
        out: asyncio.Queue[object] = asyncio.Queue()
        # Awaited below; cancelled by the runner if the caller stops iterating.
        main = runner.get_loop().create_task(_main(payload, out))
        while True:
            item = runner.run(out.get())
            if item is None:
                break
            assert isinstance(item, SessionDone | BatchStopped)
            yield item
        runner.run(_finish(main))
