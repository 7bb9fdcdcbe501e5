"""The run's own bridge: an attempt queued for whichever bridge has bots, then followed.

Why a module of its own: the owner's half of a shared attempt is a small
state machine over the job's row as each beat reads it (``queued`` →
``claimed`` → ``done``, or ``lost``), and its rules — when an attempt counts
as never joined, when a claimer is given up, how a cancel reaches another
machine — must be easy to find. What the run's watchers see is what they see
for an attempt served here: ``session_started`` once a bridge claims it (with
that bridge's identity), ``session_ended`` with the result it recorded.

- Nobody claims it within the run's pairing timeout: it is withdrawn and
  recorded ``peer_never_joined`` (no bridge had a free pair for the run).
- A cancel or this bridge's shutdown: withdrawn if still queued (nothing is
  recorded, as for a bot pair never found), else asked of the claimer, which
  ends the session with that reason at its next beat.
- The claimer stops beating for the lease, or leaves: the job is marked
  ``lost`` — unless it finished meanwhile — and the attempt is recorded
  ``bridge_lost`` (what the claimer recorded is kept, its end is added), so
  the run retries it like any unfinished attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import replace
from typing import Any

from vae.bridge_service.config import RunSettings, StopReason
from vae.bridge_service.identity import BridgeIdentity
from vae.bridge_service.runs.attempt import SessionResult
from vae.bridge_service.runs.attempt_report import emit_ended, emit_started, record_unrun_row
from vae.bridge_service.runs.dispatch import LiveSession, NotRun
from vae.bridge_service.runs.model import RunState
from vae.bridge_service.session.plan import SessionPlan
from vae.bridge_service.shared.presence import Presence
from vae.bridge_service.workers.dispatch import recorded_end
from vae.recordings.backends.locator import StoreRef
from vae.recordings.errors import StoreError
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write import session_jobs
from vae.recordings.write.session_jobs import CLAIMED, DONE, LOST, QUEUED, SessionJob
from vae.recordings.write.writer import RecordingWriter

log = logging.getLogger("vae.bridge.shared")


def plan_doc(plan: SessionPlan) -> dict[str, Any]:
    """What another bridge needs to run the attempt (the inverse is ``taker.plan_from``)."""
    return {
        "scenario": plan.scenario.to_dict(),
        "attempt": plan.attempt,
        "retry_reason": plan.retry_reason,
        "settings": plan.settings.to_dict(),
    }


class QueuedAttempt:
    """A queued attempt as the run manager reaches it (cancel, shutdown)."""

    def __init__(self, plan: SessionPlan) -> None:
        self._plan = plan
        self.asked: tuple[StopReason, str] | None = None
        self.poked = asyncio.Event()

    @property
    def plan(self) -> SessionPlan:
        return self._plan

    def request_end(self, reason: StopReason, detail: str = "") -> None:
        if self.asked is None:
            self.asked = (reason, detail)
            self.poked.set()


class Owner:
    def __init__(
        self, writer: RecordingWriter, db_path: StoreRef, presence: Presence, wake: asyncio.Event
    ) -> None:
        self.writer = writer
        self.db_path = db_path
        self.presence = presence
        #: Set when a job is queued, so this bridge's own taker looks at once.
        self.wake = wake

    def takes(self, settings: RunSettings) -> bool:
        # A connector or a replayed side is dialled by the run's bridge: those stay here.
        return (
            settings.user_connector is None
            and settings.agent_connector is None
            and not settings.replay_from
        )

    async def running_elsewhere(self, run_id: str) -> str:
        # A resume here would run the run's scenarios a second time beside its owner.
        for owner, bridge in (await session_jobs.owners_of(self.writer, run_id)).items():
            if owner != self.presence.bridge_id and self.presence.alive(owner):
                return str(bridge.get("address") or bridge.get("host") or owner)
        return ""

    async def _enqueue(self, run: RunState, plan: SessionPlan) -> int:
        job = SessionJob(
            plan.session_id, run.run_id, self.presence.bridge_id, plan_doc(plan),
            plan.settings.modality, plan.settings.clock, time.time_ns(),
        )  # fmt: skip
        await session_jobs.enqueue(self.writer, job)
        self.wake.set()
        return self.presence.begun  # a beat begun later reads the job

    async def run_queued(
        self, run: RunState, plan: SessionPlan, live: dict[str, LiveSession]
    ) -> SessionResult:
        attempt = QueuedAttempt(plan)
        live[plan.session_id] = attempt
        try:
            result, served = await self._follow(run, plan, attempt)
        finally:
            live.pop(plan.session_id, None)
            with contextlib.suppress(StoreError):
                await session_jobs.forget(self.writer, plan.session_id)
        await emit_ended(run, served, result)
        return result

    async def _follow(
        self, run: RunState, plan: SessionPlan, attempt: QueuedAttempt
    ) -> tuple[SessionResult, SessionPlan]:
        sid, presence = plan.session_id, self.presence
        if run.cancel.is_set():
            attempt.request_end(StopReason.CANCELLED, "run cancelled")
        after = await self._enqueue(run, plan)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + plan.settings.pairing_timeout_s
        served, started, asked_sent = plan, False, False
        while True:
            if presence.failure is not None:
                # No more beats: nothing would ever change what this loop reads.
                raise presence.failure
            view = presence.owned.get(sid) if presence.current > after else None
            state = view.state if view is not None else ""
            if attempt.asked is not None and not asked_sent:
                if state in ("", QUEUED) and await session_jobs.withdraw(self.writer, sid):
                    raise NotRun
                reason, detail = attempt.asked
                await session_jobs.ask_end(self.writer, sid, str(reason), detail)
                asked_sent = True
            if presence.current > after and view is None:
                # Removed as if this bridge were dead (it paused past the lease): queue again.
                log.warning("%s: the shared queue lost it; queueing it again", sid)
                after = await self._enqueue(run, plan)
                continue
            if view is not None and state in (CLAIMED, DONE, LOST) and not started:
                served = replace(plan, served_by=BridgeIdentity.from_dict(view.bridge))
                await emit_started(run, served)
                started = True
            if view is not None and state == DONE:
                why = "the bridge serving it reported it done but recorded no end"
                result = await self._end(served, StopReason.BRIDGE_LOST, why)
                return result, await self._as_recorded(served)
            claimer = view.claimed_by if view is not None else ""
            if (
                state == CLAIMED
                and not presence.alive(claimer)
                and await session_jobs.mark_lost(self.writer, sid, claimer)
            ):
                detail = self._lost(served, claimer)
                log.error("%s: %s", sid, detail)
                return await self._end(served, StopReason.BRIDGE_LOST, detail), served
            if (
                state == QUEUED
                and loop.time() > deadline
                and attempt.asked is None
                and await session_jobs.withdraw(self.writer, sid)
            ):
                detail = (
                    f"no bridge sharing this database had a free user and agent bot for run "
                    f"{run.run_id} within {plan.settings.pairing_timeout_s:g} s"
                )
                unrun = await record_unrun_row(
                    self.writer, plan, StopReason.PEER_NEVER_JOINED, detail
                )
                return unrun, served
            await self._wait(attempt)

    async def _wait(self, attempt: QueuedAttempt) -> None:
        beat = asyncio.ensure_future(self.presence.next_beat(self.presence.beat_s * 4))
        poke = asyncio.ensure_future(attempt.poked.wait())
        try:
            await asyncio.wait([beat, poke], return_when=asyncio.FIRST_COMPLETED)
        finally:
            beat.cancel()
            poke.cancel()
        attempt.poked.clear()

    def _lost(self, served: SessionPlan, claimer: str) -> str:
        who = served.served_by
        label = f"{who.address or who.host} (host {who.host}, pid {who.pid})" if who else claimer
        silent = self.presence.silent_for(claimer)
        how = "left" if silent == float("inf") else f"beat nothing for {silent:.1f} s"
        return f"the bridge at {label} serving it {how}; it is retried at a live bridge"

    async def _as_recorded(self, served: SessionPlan) -> SessionPlan:
        """``served`` with the process that recorded it (a worker of the claiming bridge)."""

        def read() -> dict[str, Any] | None:
            with RecordingReader(self.db_path) as reader:
                return reader.session_bridges(served.run_id).get(served.session_id)

        recorded = await asyncio.to_thread(read)
        if recorded is None:
            return served
        return replace(served, served_by=BridgeIdentity.from_dict(recorded))

    async def _end(self, plan: SessionPlan, reason: StopReason, detail: str) -> SessionResult:
        return await recorded_end(self.writer, self.db_path, plan, reason, detail)
