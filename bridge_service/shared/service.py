"""Sharing runs with the other bridges of the store, started and stopped with the server.

Why a module of its own: the order of things matters at both ends. Starting:
the first beat is written before anything is queued (a job whose owner has
no beat is taken for a dead bridge's). Stopping: first this bridge takes no
more work and ends what it serves for others (``bridge_lost``: retried at a
live bridge) and for itself (``shutdown``); then the run manager shuts its
runs down while the beats go on (an attempt of this bridge's run served
elsewhere still reports its end through the store); last the beats stop and
the bridge leaves (its row and unserved jobs go at once, so nobody waits for
its lease to run out).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from vae.bridge_service.config import StopReason
from vae.bridge_service.runs.execute import RunExecutor
from vae.bridge_service.runs.pairing import PairingPool
from vae.bridge_service.shared.owner import Owner
from vae.bridge_service.shared.presence import BEAT_S, LEASE_S, Presence
from vae.bridge_service.shared.taker import Taker
from vae.recordings.backends.locator import StoreRef
from vae.recordings.errors import StoreError

log = logging.getLogger("vae.bridge.shared")


class SharedRuns:
    def __init__(
        self,
        executor: RunExecutor,
        db_path: StoreRef,
        pool: PairingPool,
        vae_version: str,
        *,
        beat_s: float = BEAT_S,
        lease_s: float = LEASE_S,
    ) -> None:
        assert executor.identity is not None
        writer = executor.writer
        self.presence = Presence(writer, executor.identity, beat_s=beat_s, lease_s=lease_s)
        # The taker's sessions are its own (the run manager's live sessions are the owner's).
        serving = RunExecutor(writer, pool, executor.bridge, {})
        serving.identity, serving.dispatch = executor.identity, executor.dispatch
        self.taker = Taker(self.presence, pool, serving, vae_version)
        self.owner = Owner(writer, db_path, self.presence, self.taker.wake)
        self._stop_taking = asyncio.Event()
        self._stop_beating = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.presence.beat_once()
        self._task = asyncio.create_task(self._run(), name="shared-runs")
        log.info(
            "sharing runs with the other bridges of this database as %s", self.presence.bridge_id
        )

    async def _run(self) -> None:
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self.taker.run(self._stop_taking))
                tg.create_task(self._beat())
        except* StoreError as group:  # the writer failed: end what is served here
            why = f"storage failed: {group.exceptions[0]}"
            log.error("shared runs stopped: %s", why)
            self._end_served(StopReason.STORAGE_ERROR, why, group.exceptions[0])
        except* Exception as group:  # a bug: never a bridge that silently stopped beating
            error = group.exceptions[0]
            log.error("shared runs stopped: the bridge failed", exc_info=error)
            why = f"the bridge failed: {type(error).__name__}: {error}"
            self._end_served(StopReason.BRIDGE_ERROR, why, error)

    def _end_served(self, reason: StopReason, why: str, error: BaseException) -> None:
        """End what is served here; this bridge's own queued attempts stop waiting."""
        for session in list(self.taker.live.values()):
            session.request_end(reason, why)
        self.presence.stopped(error)

    async def _beat(self) -> None:
        while not self._stop_beating.is_set():
            beat = await self.presence.beat_once()
            self.taker.end_asked(beat.end_asked)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop_beating.wait(), self.presence.beat_s)

    def quiesce(self, address: str) -> None:
        """Take no more work; end every session served here (first step of a stop)."""
        self._stop_taking.set()
        self.taker.end_all(address)

    async def stop(self) -> None:
        """After the run manager's shutdown: wait for the sessions, stop beating, leave."""
        self._stop_taking.set()
        self._stop_beating.set()
        if self._task is not None:
            await self._task
            self._task = None
        with contextlib.suppress(StoreError):
            await self.presence.leave()
