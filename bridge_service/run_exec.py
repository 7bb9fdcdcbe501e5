"""Executing a run: scenarios under a concurrency limit, attempts, retries (DESIGN.md §4).

Each scenario gets attempts until one needs no retry:

- an attempt with zero conversation turns (the bots never talked) is retried
  when ``auto_resume_on_stale`` (default on);
- an attempt whose agent spoke fewer than ``min_agent_turns`` times is retried
  only when ``auto_resume_on_insufficient_turns`` (default off: retrying a
  forced failure biases the score upward);
- at most ``max_auto_retries`` (default 1) retries, each after
  ``auto_retry_backoff_s``; a cancel or shutdown is never retried.

Turn counts come from the bridge's own record (talk spurts in the received
audio). Every attempt is kept: a retried one is marked ``superseded`` with the
reason, and the new attempt carries it as ``retry_reason``.

An attempt whose bots never arrive (pairing timeout) or whose connector cannot
dial is still recorded as a session (0 turns, ``bot_disconnected``, the detail
saying which role was missing), so it is visible and retried like any stale one.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

from bridge_service.config import BridgeSettings, StopReason
from bridge_service.connectors.base import ConnectorError, SideEndpoint, dial
from bridge_service.pairing import PairingPool, PairingTimeout
from bridge_service.plan import SessionPlan
from bridge_service.replay.source import open_replay, record_link
from bridge_service.run_model import RunEvent, RunEventKind, RunState, SessionSummary
from bridge_service.session import Session, SessionResult
from recordings.models import RunStatus, SessionRecord, SessionStatus, Side
from recordings.scenario import Scenario
from recordings.writer import RecordingWriter

log = logging.getLogger("vae.bridge.runs")
T = TypeVar("T")

_FAILED_REASONS = {StopReason.BOT_ERROR, StopReason.BOT_DISCONNECTED}


class RunCancelled(Exception):
    pass


@dataclass(frozen=True)
class Todo:
    scenario: Scenario
    first_attempt: int = 1
    retry_reason: str = ""


def session_id_for(run_id: str, scenario_name: str, attempt: int) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", scenario_name).strip("-") or "scenario"
    return f"{run_id}_{slug}_a{attempt}"


def retry_reason(result: SessionResult, run: RunState) -> str:
    s = run.settings
    if result.stop_reason in (StopReason.CANCELLED, StopReason.SHUTDOWN):
        return ""
    if result.user_turns + result.agent_turns == 0 and s.auto_resume_on_stale:
        return "stale: 0 conversation turns"
    if (
        s.min_agent_turns
        and result.agent_turns < s.min_agent_turns
        and s.auto_resume_on_insufficient_turns
    ):
        return f"insufficient agent turns: {result.agent_turns} < {s.min_agent_turns}"
    return ""


class RunExecutor:
    def __init__(
        self,
        writer: RecordingWriter,
        pool: PairingPool,
        bridge: BridgeSettings,
        live_sessions: dict[str, Session],
    ) -> None:
        self.writer = writer
        self.pool = pool
        self.bridge = bridge
        self.live = live_sessions

    async def execute(self, run: RunState, todo: list[Todo]) -> None:
        sem = asyncio.Semaphore(run.settings.concurrency)
        try:
            async with asyncio.TaskGroup() as tg:
                for item in todo:
                    tg.create_task(self._scenario(run, item, sem))
        finally:
            if run.shutting_down:
                status = RunStatus.FAILED
                message = f"the bridge shut down; resume with: vae run --resume {run.run_id}"
            elif run.cancel.is_set():
                status, message = RunStatus.CANCELLED, "cancelled"
            elif run.failed:
                status, message = RunStatus.FAILED, "some scenarios failed (see sessions)"
            else:
                status, message = RunStatus.COMPLETED, "all scenarios done"
            run.status = status
            run.finished_ns = time.time_ns()
            await self.writer.update_run_status(run.run_id, str(status), run.finished_ns)
            await self.writer.flush()
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
                await self.writer.mark_superseded(result.session_id, f"retried: {why}")
                await run.emit(
                    RunEvent(
                        RunEventKind.SESSION_RETRYING,
                        run.run_id,
                        run.done,
                        run.total,
                        f"{item.scenario.name}: {why}; attempt {attempt + 1} in "
                        f"{run.settings.auto_retry_backoff_s:g} s",
                    )
                )
                backoff = asyncio.sleep(run.settings.auto_retry_backoff_s)
                await self._until_cancelled(run, backoff)
                attempt, reason, retries = attempt + 1, why, retries + 1
        except RunCancelled:
            pass
        if (
            result is None
            or result.stop_reason in _FAILED_REASONS
            or (
                result.user_turns + result.agent_turns == 0
                and result.stop_reason not in (StopReason.CANCELLED, StopReason.SHUTDOWN)
            )
        ):
            run.failed = run.failed or not run.cancel.is_set()
        run.done += 1

    async def _endpoints(
        self, run: RunState, preset: SideEndpoint | None = None
    ) -> dict[Side, SideEndpoint]:
        s = run.settings
        dialled: dict[Side, SideEndpoint] = {} if preset is None else {preset.role: preset}
        try:
            for side, config in ((Side.USER, s.user_connector), (Side.AGENT, s.agent_connector)):
                if config is not None and side not in dialled:
                    dialled[side] = await dial(config, side)
            need = [side for side in (Side.USER, Side.AGENT) if side not in dialled]
            claim = self.pool.claim(run.run_id, need, s.pairing_timeout_s)
            dialled.update(await self._until_cancelled(run, claim))
        except BaseException:
            for endpoint in dialled.values():
                await endpoint.close(None)
            raise
        return dialled

    async def _attempt(
        self, run: RunState, scenario: Scenario, attempt: int, reason: str
    ) -> SessionResult:
        session_id = session_id_for(run.run_id, scenario.name, attempt)
        plan = SessionPlan(
            run.run_id, session_id, scenario, attempt, run.settings, self.bridge, reason
        )
        try:
            # A replay plays the user side itself (bridge_service.replay).
            replayed = await open_replay(run.settings, plan, self.writer.path)
            endpoints = await self._endpoints(run, replayed)
        except (PairingTimeout, ConnectorError) as exc:
            return await self._record_unpaired(run, plan, str(exc))
        session = Session(plan, endpoints[Side.USER], endpoints[Side.AGENT], self.writer)
        self.live[session_id] = session
        try:
            if run.cancel.is_set():
                session.request_end(StopReason.CANCELLED, "run cancelled")
            summary = SessionSummary(
                run.run_id, session_id, scenario.name, attempt, retry_reason=reason
            )
            await run.emit(
                RunEvent(
                    RunEventKind.SESSION_STARTED,
                    run.run_id,
                    run.done,
                    run.total,
                    f"{scenario.name} attempt {attempt}",
                    session=summary,
                )
            )
            result = await session.run()
            await record_link(self.writer, session_id, endpoints[Side.USER])
        finally:
            self.live.pop(session_id, None)
        await self._emit_ended(run, plan, result)
        return result

    async def _record_unpaired(
        self, run: RunState, plan: SessionPlan, detail: str
    ) -> SessionResult:
        now = time.time_ns()
        await self.writer.start_session(
            SessionRecord(
                plan.session_id,
                run.run_id,
                plan.scenario.name,
                plan.attempt,
                SessionStatus.RUNNING,
                now,
                retry_reason=plan.retry_reason,
            )
        )
        await self.writer.end_session(
            plan.session_id,
            ended_ns=now,
            stop_reason=str(StopReason.BOT_DISCONNECTED),
            stop_detail=detail,
            clean_exit=False,
            user_turns=0,
            agent_turns=0,
        )
        result = SessionResult(
            plan.session_id, StopReason.BOT_DISCONNECTED, detail, False, 0, 0, now, now
        )
        log.warning("%s attempt %d: %s", plan.scenario.name, plan.attempt, detail)
        await self._emit_ended(run, plan, result)
        return result

    async def _emit_ended(self, run: RunState, plan: SessionPlan, result: SessionResult) -> None:
        summary = SessionSummary(
            run.run_id,
            result.session_id,
            plan.scenario.name,
            plan.attempt,
            str(result.stop_reason),
            result.clean_exit,
            result.user_turns,
            result.agent_turns,
            result.duration_s,
            "ended",
            plan.retry_reason,
        )
        message = f"{plan.scenario.name} attempt {plan.attempt}: {result.stop_reason}"
        if result.detail:
            message += f" ({result.detail})"
        await run.emit(
            RunEvent(
                RunEventKind.SESSION_ENDED,
                run.run_id,
                run.done,
                run.total,
                message,
                session=summary,
            )
        )
