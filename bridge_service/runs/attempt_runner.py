"""One attempt of a scenario: its sides dialled or claimed, run here or elsewhere, recorded.

Apart from :mod:`vae.bridge_service.runs.execute` (the run: scenarios under a
concurrency limit, retries, the final status) because this changes with where
and how one attempt runs, not with the run's rules. The run executor is an
:class:`AttemptRunner`; a bridge taking attempts from the shared queue
(:mod:`vae.bridge_service.shared`) serves them through :meth:`AttemptRunner.serve_paired`.

An attempt whose bots never arrive (pairing timeout) or whose connector cannot
dial is still recorded as a session (0 turns, ``peer_never_joined`` naming the
role and the wait, or ``connector_failed`` with the connector's error), so it
is visible and retried like any stale one; a session the bridge itself failed
ends ``bridge_error``. Whatever way an attempt ends, both of its endpoints are
closed, so a leased connector slot (``connectors.pool``) is always given back
for the retry. What each attempt records and announces lives in
``vae.bridge_service.runs.attempt_report``. Once an attempt's bots are paired, a
:class:`~vae.bridge_service.runs.dispatch.Dispatch` (the bridge's worker
processes, with ``--workers N``) may run it in another process; otherwise,
and always for a replay, it runs here. Capacity, endpoint pools and connector
retries live in ``connectors.pool``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable
from typing import TypeVar

from vae.bridge_service.config import BridgeSettings, StopReason
from vae.bridge_service.connectors.base import ConnectorError, SideEndpoint
from vae.bridge_service.connectors.pool import ConnectorPools
from vae.bridge_service.identity import BridgeIdentity
from vae.bridge_service.replay.source import open_replay, record_link
from vae.bridge_service.runs.attempt import Session, SessionResult
from vae.bridge_service.runs.attempt_report import emit_ended, emit_started, record_unrun
from vae.bridge_service.runs.dial import dial_for, refusal_reason
from vae.bridge_service.runs.dispatch import Dispatch, LiveSession, NotRun, SharedQueue
from vae.bridge_service.runs.model import RunState
from vae.bridge_service.runs.pairing import PairingPool, PairingTimeout
from vae.bridge_service.runs.tiers import plan_on_clock
from vae.bridge_service.session.plan import SessionPlan
from vae.bridge_service.telemetry.hub import TraceHub
from vae.bridge_service.tools.backend import Reservation
from vae.bridge_service.tools.session import reserve as reserve_backend
from vae.recordings.models import Side
from vae.recordings.scenarios.model import Scenario
from vae.recordings.write.writer import RecordingWriter

log = logging.getLogger("vae.bridge.runs")
T = TypeVar("T")


class RunCancelled(Exception):
    pass


async def close_endpoints(endpoints: dict[Side, SideEndpoint]) -> None:
    """Close every side, each whatever the others did (a leased side frees its pool slot)."""
    for endpoint in endpoints.values():
        with contextlib.suppress(Exception):
            await endpoint.close(None)


def session_id_for(run_id: str, scenario_name: str, attempt: int) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", scenario_name).strip("-") or "scenario"
    return f"{run_id}_{slug}_a{attempt}"


class AttemptRunner:
    """Runs single attempts of a run's scenarios, with what every attempt needs."""

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
        #: OpenTelemetry: sessions the agent's spans are tied to (set by the server).
        self.traces: TraceHub | None = None

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

    async def _endpoints(
        self,
        run: RunState,
        preset: SideEndpoint | None = None,
        plan: SessionPlan | None = None,
        tools: Reservation | None = None,
    ) -> dict[Side, SideEndpoint]:
        s = run.settings
        dialled: dict[Side, SideEndpoint] = {} if preset is None else {preset.role: preset}
        try:
            for side, config in ((Side.USER, s.user_connector), (Side.AGENT, s.agent_connector)):
                if config is not None and side not in dialled:
                    at = tools.addresses if tools is not None and side is Side.AGENT else None
                    config = dial_for(config, plan, at)
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
        # An agent reached through a connector learns its tool backend as it is dialled.
        tools = reserve_backend(plan) if run.settings.agent_connector is not None else None
        try:
            try:
                # A replay plays the user side itself (vae.bridge_service.replay).
                replayed = await open_replay(run.settings, plan, self.writer.path)
                endpoints = await self._endpoints(run, replayed, plan, tools)
            except BaseException:
                if tools is not None:
                    tools.close()
                raise
        except PairingTimeout as exc:
            why = StopReason.BOT_UNSUPPORTED if exc.unsupported else StopReason.PEER_NEVER_JOINED
            return await record_unrun(self.writer, run, plan, why, str(exc))
        except ConnectorError as exc:
            detail = f"connector: {exc}"
            why = refusal_reason(exc)  # a SIP final answer (busy, not found...) or connector_failed
            return await record_unrun(self.writer, run, plan, why, detail)
        except (RunCancelled, asyncio.CancelledError):
            raise
        except Exception as exc:
            log.exception("%s attempt %d: dialling failed", scenario.name, attempt)
            detail = f"connector: {type(exc).__name__}: {exc}"
            return await record_unrun(self.writer, run, plan, StopReason.CONNECTOR_FAILED, detail)
        return await self.serve_paired(run, plan, endpoints, replayed, tools)

    async def serve_paired(
        self,
        run: RunState,
        plan: SessionPlan,
        endpoints: dict[Side, SideEndpoint],
        replayed: SideEndpoint | None = None,
        tools: Reservation | None = None,
    ) -> SessionResult:
        """Run an attempt whose sides are at hand: at a worker, else in this process
        (also an attempt claimed from the shared queue: ``vae.bridge_service.shared``).

        ``tools``: the session's tool backend port, bound before its agent was
        dialled; the session's backend serves it (closed on every other way out).
        """
        plan = plan_on_clock(plan, endpoints)  # --clock auto: this session's clock, from its sides
        session_id = plan.session_id
        if self.traces is not None:  # the agent's spans of this session may now arrive
            agent = endpoints[Side.AGENT].bot.labels.get("url", "")
            self.traces.session_started(plan.run_id, session_id, str(agent))
        try:
            return await self._serve_paired(run, plan, endpoints, replayed, tools)
        finally:
            if tools is not None:
                tools.close()  # a no-op once the session's backend took the socket
            if self.traces is not None:
                self.traces.session_ended(session_id)

    async def _serve_paired(
        self,
        run: RunState,
        plan: SessionPlan,
        endpoints: dict[Side, SideEndpoint],
        replayed: SideEndpoint | None,
        tools: Reservation | None,
    ) -> SessionResult:
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
            session = Session(plan, endpoints[Side.USER], endpoints[Side.AGENT], self.writer, tools)
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
