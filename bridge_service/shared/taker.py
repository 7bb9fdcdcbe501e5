"""The claiming side: attempts of any sharing bridge's run, taken when bots are free here.

Why a module of its own: *when* this bridge takes work from the shared queue
is its own policy. It looks whenever a bot of each role waits here and a job
waits in the queue (as of the last beat), or at once when this bridge queued
one itself. It claims the oldest job this bridge has bots for — the bots may
take that run (``run_filter``) and can follow its modality and clock — in one
short ``FOR UPDATE SKIP LOCKED`` transaction, so two bridges never take the
same job and never wait on each other; then it takes the bots from its
pairing pool (if another of its runs took them meanwhile, the job goes back).

A claimed attempt is served exactly as this bridge serves its own
(:meth:`AttemptRunner.serve_paired`: at one of its workers with ``--workers``),
recorded with this bridge's identity, then marked ``done``; its owner reads
the result. Its sessions live apart from the run manager's (``live``), so an
end the owner asks for (cancel, its shutdown) reaches them at the next beat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from vae.bridge_service.config import RunSettings, StopReason
from vae.bridge_service.connectors.base import SideEndpoint
from vae.bridge_service.runs.attempt_report import record_unrun_row
from vae.bridge_service.runs.attempt_runner import RunCancelled, close_endpoints
from vae.bridge_service.runs.dispatch import LiveSession
from vae.bridge_service.runs.execute import RunExecutor
from vae.bridge_service.runs.model import RunState
from vae.bridge_service.runs.pairing import PairingPool
from vae.bridge_service.session.plan import SessionPlan
from vae.bridge_service.shared.presence import Presence
from vae.recordings.errors import StoreError
from vae.recordings.models import Side
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.recordings.write import session_jobs
from vae.recordings.write.session_jobs import SessionJob

log = logging.getLogger("vae.bridge.shared")
ROLES = [Side.USER, Side.AGENT]


class Taker:
    def __init__(
        self, presence: Presence, pool: PairingPool, executor: RunExecutor, vae_version: str
    ) -> None:
        self.presence = presence
        self.pool = pool
        #: This bridge's own executor (writer, identity, workers), with its own live sessions.
        self.executor = executor
        self.vae_version = vae_version
        self.live: dict[str, LiveSession] = executor.live
        #: Session id -> the job, for every attempt served here.
        self.serving: dict[str, SessionJob] = {}
        self.wake = asyncio.Event()
        self.taking = True
        self._asked: set[str] = set()

    def _fits(self, job: SessionJob) -> bool:
        return self.presence.alive(job.owner) and self.pool.can_pair(
            job.run_id, ROLES, job.modality, job.clock
        )

    def _pair_waits(self) -> bool:
        return self.pool.waiting(Side.USER) > 0 and self.pool.waiting(Side.AGENT) > 0

    async def run(self, stop: asyncio.Event) -> None:
        """Claim and serve until ``stop``; then wait for what is being served."""
        async with asyncio.TaskGroup() as tg:
            while not stop.is_set():
                woken = self.wake.is_set()
                self.wake.clear()
                if self.taking and self._pair_waits() and (woken or self.presence.queued):
                    while self.taking and self._pair_waits():
                        if not await self._take_one(tg):
                            break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), self.presence.beat_s)

    async def _take_one(self, tg: asyncio.TaskGroup) -> bool:
        me = self.presence.bridge_id
        job = await session_jobs.claim(
            self.executor.writer, me, self.presence.identity.to_dict(), self._fits
        )
        if job is None:
            return False
        endpoints = await self.pool.take_now(job.run_id, ROLES, job.modality, job.clock)
        if endpoints is None:
            await session_jobs.release(self.executor.writer, job.session_id, me)
            return False
        self.serving[job.session_id] = job
        tg.create_task(self._serve(job, endpoints), name=f"shared:{job.session_id}")
        return True

    async def _serve(self, job: SessionJob, endpoints: dict[Side, SideEndpoint]) -> None:
        """Serve one claimed attempt; whatever happens, the job ends (never this task group)."""
        log.info("serving %s of run %s (queued by %s)", job.session_id, job.run_id, job.owner)
        try:
            try:
                run, plan = self._plan(job)
            except Exception:
                # A job this vae cannot read (another version queued it): done, with no
                # session recorded; its owner records that and retries it.
                log.exception("%s: cannot read the queued attempt", job.session_id)
                await close_endpoints(endpoints)
            else:
                try:
                    await self.executor.serve_paired(run, plan, endpoints)
                except RunCancelled:  # ended before it started (at a worker): say so
                    detail = "ended before it started"
                    await record_unrun_row(self.executor.writer, plan, StopReason.CANCELLED, detail)
                except StoreError:
                    raise
                except Exception:
                    # Still marked done below: left claimed by this live bridge, its owner
                    # would wait for it forever. The owner records what was recorded here,
                    # else ends it ``bridge_lost``, and retries it.
                    log.exception("%s: serving it failed", job.session_id)
            writer, me = self.executor.writer, self.presence.bridge_id
            if not await session_jobs.finish(writer, job.session_id, me):
                # Its owner gave it up (this bridge was silent past the lease) and retries
                # it: what was recorded here late stays, superseded, never a second result.
                why = "given up by the run's bridge (this bridge was silent past the lease)"
                log.warning("%s: %s; recorded here as superseded", job.session_id, why)
                await writer.mark_superseded(job.session_id, why)
        except StoreError as exc:
            # The store failed: the owner gives the job up once this bridge stops beating.
            log.error("%s: storage failed serving it: %s", job.session_id, exc)
        except Exception:
            log.exception("%s: ending the job failed", job.session_id)
        finally:
            self.serving.pop(job.session_id, None)

    def _plan(self, job: SessionJob) -> tuple[RunState, SessionPlan]:
        doc = job.plan
        settings = RunSettings.from_dict(doc["settings"])
        scenario = scenario_from_dict(doc["scenario"], f"{job.run_id} (queued)")
        # A stand-in for the run: its events go to the owner through the store, not from here.
        run = RunState(job.run_id, settings, [scenario], time.time_ns(), self.vae_version, 1)
        plan = SessionPlan(
            job.run_id,
            job.session_id,
            scenario,
            int(doc["attempt"]),
            settings,
            self.executor.bridge,
            str(doc.get("retry_reason", "")),
            served_by=self.executor.identity,
        )
        return run, plan

    def end_asked(self, asked: dict[str, tuple[str, str]]) -> None:
        """End the sessions whose owner asked (a cancel, its shutdown), once each."""
        for session_id, (reason, detail) in asked.items():
            session = self.live.get(session_id)
            if session is None or session_id in self._asked:
                continue
            self._asked.add(session_id)
            session.request_end(StopReason(reason), detail)

    def end_all(self, address: str) -> None:
        """This bridge stops: its own runs' sessions end ``shutdown``, others' ``bridge_lost``."""
        self.taking = False
        for session_id, session in list(self.live.items()):
            job = self.serving.get(session_id)
            if job is not None and job.owner != self.presence.bridge_id:
                session.request_end(
                    StopReason.BRIDGE_LOST,
                    f"the bridge at {address} serving it shut down; it is retried at a live bridge",
                )
            else:
                session.request_end(StopReason.SHUTDOWN, "the bridge is shutting down")
