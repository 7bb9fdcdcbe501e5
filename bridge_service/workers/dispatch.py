"""Handing paired sessions to workers: the front door's run dispatch.

The :class:`~vae.bridge_service.runs.dispatch.Dispatch` of a bridge with workers.

An attempt goes to a worker only when both of its bots are gRPC streams that
declared ``Join.accepts_redirect`` (a connector, a replayed side or a bot
that does not follow redirects keeps the whole session in the front door,
served as by a bridge without workers) and a worker is up. Then:

1. the least loaded worker gets the plan and one fresh ticket per bot
   (``remote_wire``); if it does not accept within a few seconds, nothing
   was sent to the bots and the front door serves the session itself;
2. each bot gets a ``Redirect`` (the worker's port, its ticket) and its
   stream here ends; the bots open new streams at the worker;
3. the worker's ``Started`` and ``Ended`` become the run's progress events,
   and its recorded result is the attempt's result (retries as usual);
4. a worker that dies meanwhile (its call breaks) is first confirmed gone —
   killed if it lingers — so no two processes record the attempt's end; then
   the attempt is recorded ``worker_lost`` (unfinished: retried like any
   unfinished attempt), unless the worker had recorded its end already. A
   worker that answers with an error instead (a bug there) has finished with
   the attempt: it is recorded ``bridge_error`` unless already ended.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import replace

from vae.bridge_service.config import StopReason
from vae.bridge_service.connectors.base import RedirectOut, SideEndpoint
from vae.bridge_service.edge.converse_endpoint import GrpcEndpoint
from vae.bridge_service.runs.attempt import SessionResult
from vae.bridge_service.runs.attempt_report import (
    emit_ended,
    emit_started,
    end_unrun,
    record_unrun_row,
)
from vae.bridge_service.runs.dispatch import LiveSession, NotRun
from vae.bridge_service.runs.model import RunState
from vae.bridge_service.session.plan import SessionPlan
from vae.bridge_service.workers.pool import WorkerPool
from vae.bridge_service.workers.process import WorkerProcess
from vae.bridge_service.workers.remote_wire import RemoteAttempt, WorkerGone
from vae.recordings.backends.locator import StoreRef
from vae.recordings.models import SessionRecord, SessionStatus, Side
from vae.recordings.read.reader import RecordingReader
from vae.recordings.stop_reasons import normalise
from vae.recordings.write.writer import RecordingWriter

log = logging.getLogger("vae.bridge.workers")

#: How long a worker may take to accept a session before the front door serves it.
ACCEPT_WITHIN_S = 5.0


def redirectable(endpoints: dict[Side, SideEndpoint]) -> dict[Side, GrpcEndpoint] | None:
    """The endpoints as gRPC streams when every one follows redirects, else None."""
    streams = {s: e for s, e in endpoints.items() if isinstance(e, GrpcEndpoint)}
    if len(streams) != len(endpoints) or not all(e.accepts_redirect for e in streams.values()):
        return None
    return streams


class WorkerDispatch:
    def __init__(self, pool: WorkerPool, writer: RecordingWriter, db_path: StoreRef) -> None:
        self.pool = pool
        self.writer = writer
        self.db_path = db_path

    async def run_elsewhere(
        self,
        run: RunState,
        plan: SessionPlan,
        endpoints: dict[Side, SideEndpoint],
        live: dict[str, LiveSession],
    ) -> SessionResult | None:
        streams = redirectable(endpoints)
        if streams is None:
            return None
        worker = self.pool.choose()
        if worker is None or worker.stub is None or worker.identity is None:
            return None
        worker.load += 1
        try:
            return await self._run_on(worker, run, plan, streams, live)
        finally:
            worker.load -= 1

    async def _run_on(
        self,
        worker: WorkerProcess,
        run: RunState,
        plan: SessionPlan,
        streams: dict[Side, GrpcEndpoint],
        live: dict[str, LiveSession],
    ) -> SessionResult | None:
        assert worker.stub is not None and worker.identity is not None
        tickets = {side: secrets.token_urlsafe(24) for side in streams}
        remote = RemoteAttempt(worker.stub, plan, tickets)
        try:
            await remote.open(ACCEPT_WITHIN_S)
        except WorkerGone as exc:
            log.warning(
                "%s did not take %s (%s): serving it here", worker.label, plan.session_id, exc
            )
            remote.close()
            return None
        served = replace(plan, served_by=replace(worker.identity))
        arrive_ms = int(plan.settings.pairing_timeout_s * 1000)
        for side, stream in streams.items():
            out = RedirectOut(worker.port, tickets[side], worker.label, arrive_ms, plan.session_id)
            await stream.redirect(out)
        live[plan.session_id] = remote
        try:
            if run.cancel.is_set():
                remote.request_end(StopReason.CANCELLED, "run cancelled")
            try:
                result = await remote.outcome(lambda: emit_started(run, served))
            except WorkerGone as exc:
                if exc.answered:  # the worker lives on: its bug, this attempt's end
                    reason = StopReason.BRIDGE_ERROR
                    detail = f"the bridge failed: {worker.label} (pid {worker.pid}): {exc}"
                else:
                    how = await self.pool.confirm_dead(worker)
                    reason = StopReason.WORKER_LOST
                    detail = f"{worker.label} (pid {worker.pid}) serving it was lost ({how}; {exc})"
                log.error("%s: %s", plan.session_id, detail)
                result = await self._record_end(served, reason, detail)
        finally:
            live.pop(plan.session_id, None)
            remote.close()
        if result is None:
            raise NotRun
        await emit_ended(run, served, result)
        return result

    async def _record_end(
        self, plan: SessionPlan, reason: StopReason, detail: str
    ) -> SessionResult:
        return await recorded_end(self.writer, self.db_path, plan, reason, detail)


async def recorded_end(
    writer: RecordingWriter, db_path: StoreRef, plan: SessionPlan, reason: StopReason, detail: str
) -> SessionResult:
    """The attempt's end when the process serving it cannot say: what it recorded,
    else ``reason`` (also for an attempt another bridge served: ``vae.bridge_service.shared``)."""

    def read(reader: RecordingReader) -> SessionRecord | None:
        return reader.session(plan.session_id)

    row = await asyncio.to_thread(_with_reader, db_path, read)
    if row is None:
        return await record_unrun_row(writer, plan, reason, detail)
    if row.status is not SessionStatus.RUNNING and row.stop_reason:
        return SessionResult(
            row.session_id,
            StopReason(normalise(row.stop_reason)),
            row.stop_detail,
            bool(row.clean_exit),
            row.user_turns,
            row.agent_turns,
            row.started_ns,
            row.ended_ns or row.started_ns,
        )
    now = time.time_ns()
    assert plan.served_by is not None
    await end_unrun(writer, plan, reason, detail, now)
    return SessionResult(plan.session_id, reason, detail, False, 0, 0, row.started_ns, now)


def _with_reader(
    db_path: StoreRef, read: Callable[[RecordingReader], SessionRecord | None]
) -> SessionRecord | None:
    with RecordingReader(db_path) as reader:
        return read(reader)
