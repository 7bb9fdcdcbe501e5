"""Executing a run: scenarios under a concurrency limit, attempts, retries.

Each scenario gets attempts until one needs no retry:

- an attempt with zero conversation turns (the bots never talked) is retried
  when ``auto_resume_on_stale`` (default on);
- an attempt whose agent spoke fewer than ``min_agent_turns`` times is retried
  only when ``auto_resume_on_insufficient_turns`` (default off: retrying a
  forced failure biases the score upward);
- at most ``max_auto_retries`` (default 1) retries, each after
  ``auto_retry_backoff_s``; a cancel, shutdown or silent first speaker
  (``first_speaker_silent``: the same bots would wait for each other again)
  is never retried.

Turn counts come from the bridge's own record (talk spurts in the received
audio). Every attempt is kept: a retried one is marked ``superseded`` with the
reason, and the new attempt carries it as ``retry_reason``.

An attempt whose bots never arrive (pairing timeout) or whose connector cannot
dial is still recorded as a session (0 turns, ``peer_never_joined`` naming the
role and the wait, or ``connector_failed`` with the connector's error), so it
is visible and retried like any stale one; a session the bridge itself failed
ends ``bridge_error``. Whatever way an attempt ends, both of its endpoints are
closed, so a leased connector slot (``connectors.pool``) is always given back
for the retry. Any exception while running the run marks it ``failed``
with the error (``vae.bridge_service.runs.outcome`` holds these rules): a run never
reads ``completed`` with scenarios missing.
What each attempt records and announces lives in ``vae.bridge_service.runs.attempt_report``.
Once an attempt's bots are paired, a :class:`~vae.bridge_service.runs.dispatch.Dispatch`
(the bridge's worker processes, with ``--workers N``) may run it in another
process; otherwise, and always for a replay, it runs here.
Capacity, endpoint pools and connector retries live in ``connectors.pool``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

from vae.bridge_service.config import BridgeSettings, StopReason
from vae.bridge_service.connectors.base import ConnectorError, SideEndpoint
from vae.bridge_service.connectors.pool import ConnectorPools
from vae.bridge_service.identity import BridgeIdentity
from vae.bridge_service.replay.source import open_replay, record_link
from vae.bridge_service.runs.attempt import Session, SessionResult
from vae.bridge_service.runs.attempt_report import (
    emit_ended,
    emit_started,
    record_retry,
    record_unrun,
)
from vae.bridge_service.runs.dispatch import Dispatch, LiveSession, NotRun, SharedQueue
from vae.bridge_service.runs.model import RunEvent, RunEventKind, RunState
from vae.bridge_service.runs.outcome import final_status, scenario_failure
from vae.bridge_service.runs.outcome import retry_reason as _retry_reason
from vae.bridge_service.runs.pairing import PairingPool, PairingTimeout
from vae.bridge_service.session.plan import SessionPlan
from vae.recordings.errors import StoreError
from vae.recordings.models import RunStatus, Side
from vae.recordings.scenarios.model import Scenario
from vae.recordings.stop_reasons import is_finished
from vae.recordings.write.writer import RecordingWriter

log = logging.getLogger("vae.bridge.runs")
T = TypeVar("T")


class RunCancelled(Exception):
    pass


@dataclass(frozen=True)
class Todo:
    scenario: Scenario
    first_attempt: int = 1
    retry_reason: str = ""


async def close_endpoints(endpoints: dict[Side, SideEndpoint]) -> None:
    """Close every side, each whatever the others did (a leased side frees its pool slot)."""
    for endpoint in endpoints.values():
        with contextlib.suppress(Exception):
            await endpoint.close(None)


def session_id_for(run_id: str, scenario_name: str, attempt: int) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", scenario_name).strip("-") or "scenario"
    return f"{run_id}_{slug}_a{attempt}"


def retry_reason(result: SessionResult, run: RunState) -> str:
    return _retry_reason(result, run.settings)


class RunExecutor:
    def __init__(
        self,
        writer: RecordingWriter,
        pool: PairingPool,
        bridge: BridgeSettings,
        live_sessions: dict[str, LiveSession],
    ) -> None:
        self.writer = writer
        self.pool = pool
        self.bridge = bridge
        self.live = live_sessions
        self.connectors = ConnectorPools()
        #: This process, recorded with every attempt it serves (set by the server).
        self.identity: BridgeIdentity | None = None
        #: Where else a paired attempt may run (the worker processes); None: always here.
        self.dispatch: Dispatch | None = None
        #: The queue shared with other bridges (``--share-runs``); None: pair bots here.
        self.shared: SharedQueue | None = None

    async def execute(self, run: RunState, todo: list[Todo]) -> None:
        sem = asyncio.Semaphore(run.settings.concurrency)
        try:
            async with asyncio.TaskGroup() as tg:
                for item in todo:
                    tg.create_task(self._scenario(run, item, sem))
        except Exception as exc:  # the run task must end with a status, never die unseen
            error = exc.exceptions[0] if isinstance(exc, ExceptionGroup) else exc
            log.error("run %s failed", run.run_id, exc_info=error)
            run.error = f"the bridge failed running the run: {type(error).__name__}: {error}"
        finally:
            status, message = final_status(run)
            run.status = status
            run.finished_ns = time.time_ns()
            error_text = message if status is not RunStatus.COMPLETED else ""
            run.error = error_text
            await self.writer.update_run_status(
                run.run_id, str(status), run.finished_ns, error_text
            )
            try:
                await self.writer.flush()
            except StoreError as exc:  # the watcher ends everything; tell the watchers
                status, message = RunStatus.FAILED, run.storage_error or f"storage failed: {exc}"
                run.status, run.error = status, message
                # The status above may be salvaged at close; this one is salvaged after it.
                with contextlib.suppress(StoreError):
                    await self.writer.update_run_status(
                        run.run_id, str(status), run.finished_ns, message
                    )
            await run.emit(
                RunEvent(
                    RunEventKind.RUN_FINISHED,
                    run.run_id,
                    run.done,
                    run.total,
                    message,
                    status=status,
                )
            )

    async def _until_cancelled(self, run: RunState, aw: Awaitable[T]) -> T:
        work = asyncio.ensure_future(aw)
        stop = asyncio.ensure_future(run.cancel.wait())
        try:
            await asyncio.wait([work, stop], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        if not work.done():
            work.cancel()
            await asyncio.wait([work])  # its own clean-up (a connector's process) ends first
            raise RunCancelled
        return work.result()

    async def _scenario(self, run: RunState, item: Todo, sem: asyncio.Semaphore) -> None:
        attempt, reason, retries = item.first_attempt, item.retry_reason, 0
        result: SessionResult | None = None
        try:
            while True:
                async with sem:
                    if run.cancel.is_set():
                        raise RunCancelled
                    result = await self._attempt(run, item.scenario, attempt, reason)
                why = retry_reason(result, run)
                if not why or retries >= run.settings.max_auto_retries or run.cancel.is_set():
                    break
                await record_retry(self.writer, run, item.scenario.name, result, attempt, why)
                backoff = asyncio.sleep(run.settings.auto_retry_backoff_s)
                await self._until_cancelled(run, backoff)
                attempt, reason, retries = attempt + 1, why, retries + 1
        except RunCancelled:
            pass
        why = scenario_failure(item.scenario.name, result, run.cancel.is_set())
        if why:
            run.failures.append(why)
        if result is not None and is_finished(result.stop_reason):
            run.done += 1

    async def _endpoints(
        self, run: RunState, preset: SideEndpoint | None = None
    ) -> dict[Side, SideEndpoint]:
        s = run.settings
        dialled: dict[Side, SideEndpoint] = {} if preset is None else {preset.role: preset}
        try:
            for side, config in ((Side.USER, s.user_connector), (Side.AGENT, s.agent_connector)):
                if config is not None and side not in dialled:
                    dialled[side] = await self._until_cancelled(
                        run, self.connectors.dial(config, side)
                    )
            need = [side for side in (Side.USER, Side.AGENT) if side not in dialled]
            claim = self.pool.claim(
                run.run_id, need, s.pairing_timeout_s, modality=s.modality, clock=s.clock
            )
            dialled.update(await self._until_cancelled(run, claim))
        except BaseException:
            await close_endpoints(dialled)
            raise
        return dialled

    async def _attempt(
        self, run: RunState, scenario: Scenario, attempt: int, reason: str
    ) -> SessionResult:
        session_id = session_id_for(run.run_id, scenario.name, attempt)
        plan = SessionPlan(
            run.run_id,
            session_id,
            scenario,
            attempt,
            run.settings,
            self.bridge,
            reason,
            served_by=self.identity,
        )
        if self.shared is not None and self.shared.takes(run.settings):
            try:
                return await self.shared.run_queued(run, plan, self.live)
            except NotRun:
                raise RunCancelled from None
        try:
            # A replay plays the user side itself (vae.bridge_service.replay).
            replayed = await open_replay(run.settings, plan, self.writer.path)
            endpoints = await self._endpoints(run, replayed)
        except PairingTimeout as exc:
            why = StopReason.BOT_UNSUPPORTED if exc.unsupported else StopReason.PEER_NEVER_JOINED
            return await record_unrun(self.writer, run, plan, why, str(exc))
        except ConnectorError as exc:
            detail = f"connector: {exc}"
            why = StopReason(getattr(exc, "stop_reason", StopReason.CONNECTOR_FAILED))
            return await record_unrun(self.writer, run, plan, why, detail)
        except (RunCancelled, asyncio.CancelledError):
            raise
        except Exception as exc:
            log.exception("%s attempt %d: dialling failed", scenario.name, attempt)
            detail = f"connector: {type(exc).__name__}: {exc}"
            return await record_unrun(self.writer, run, plan, StopReason.CONNECTOR_FAILED, detail)
        return await self.serve_paired(run, plan, endpoints, replayed)

    async def serve_paired(
        self,
        run: RunState,
        plan: SessionPlan,
        endpoints: dict[Side, SideEndpoint],
        replayed: SideEndpoint | None = None,
    ) -> SessionResult:
        """Run an attempt whose sides are at hand: at a worker, else in this process
        (also an attempt claimed from the shared queue: ``vae.bridge_service.shared``)."""
        scenario, attempt, session_id = plan.scenario, plan.attempt, plan.session_id
        if self.dispatch is not None and replayed is None:
            try:
                elsewhere = await self.dispatch.run_elsewhere(run, plan, endpoints, self.live)
            except NotRun:
                await close_endpoints(endpoints)
                raise RunCancelled from None
            except BaseException:
                await close_endpoints(endpoints)
                raise
            if elsewhere is not None:
                await close_endpoints(endpoints)  # redirected: their streams here end
                return elsewhere
        try:
            session = Session(plan, endpoints[Side.USER], endpoints[Side.AGENT], self.writer)
        except BaseException:
            await close_endpoints(endpoints)
            raise
        self.live[session_id] = session
        try:
            if run.cancel.is_set():
                session.request_end(StopReason.CANCELLED, "run cancelled")
            await emit_started(run, plan)
            try:
                result = await session.run()
            except Exception as exc:
                log.exception("%s attempt %d: the bridge failed", scenario.name, attempt)
                if session.result is None:
                    detail = f"the bridge failed: {type(exc).__name__}: {exc}"
                    return await record_unrun(
                        self.writer, run, plan, StopReason.BRIDGE_ERROR, detail
                    )
                result = session.result
            await record_link(self.writer, session_id, endpoints[Side.USER])
        finally:
            self.live.pop(session_id, None)
            # Every way out closes both sides (a no-op when the session already
            # did): an endpoint left open keeps its connector pool slot forever.
            await session.io.close_all()
        await emit_ended(run, plan, result)
        return result
