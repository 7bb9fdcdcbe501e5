"""The front door's workers: started together, watched, restarted, chosen by load.

- :meth:`WorkerPool.start` starts every worker at once and fails (stopping the
  ones that came up) if any does not come up: ``vae bridge serve`` then exits
  1 naming it, with nothing left running;
- a watcher per worker notices its exit at once (the process's own exit, not
  a timeout), logs how it ended, and starts a new one on a new port (0.5 s
  backoff doubling to 10 s while starts fail). The sessions it held end
  ``worker_lost`` (``dispatch``), and the run retries them;
- :meth:`choose` picks the worker with the fewest sessions handed to it,
  the least recently chosen among equals; none while every worker is down (the
  front door then serves the session itself);
- :meth:`stop` closes every worker's stdin, which ends its sessions and
  flushes its writer, and kills what has not exited after the grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging

from vae.bridge_service.workers.process import (
    WorkerLaunch,
    WorkerProcess,
    WorkerStartError,
    describe_exit,
)

log = logging.getLogger("vae.bridge.workers")

FIRST_BACKOFF_S = 0.5
MAX_BACKOFF_S = 10.0


class WorkerPool:
    def __init__(self, count: int, launch: WorkerLaunch) -> None:
        self.count = count
        self.launch = launch
        self.workers = [WorkerProcess(i + 1, launch) for i in range(count)]
        self.restarts = 0
        self._stopping = False
        self._order = itertools.count()
        self._supervisor: asyncio.Task[None] | None = None

    async def start(self) -> None:
        try:
            async with asyncio.TaskGroup() as tg:
                for worker in self.workers:
                    tg.create_task(worker.start())
        except BaseExceptionGroup as group:
            await asyncio.gather(*(w.kill() for w in self.workers), return_exceptions=True)
            await asyncio.gather(*(w.close_channel() for w in self.workers))
            failed = [e for e in group.exceptions if isinstance(e, WorkerStartError)]
            if failed:
                raise failed[0] from None
            raise
        self._supervisor = asyncio.create_task(self._supervise(), name="worker-supervisor")

    async def _supervise(self) -> None:
        async with asyncio.TaskGroup() as tg:
            for slot in range(self.count):
                tg.create_task(self._watch(slot))

    async def _watch(self, slot: int) -> None:
        while True:
            worker = self.workers[slot]
            code = await worker.wait()
            if self._stopping:
                return
            log.error(
                "%s (pid %d) %s; its sessions end worker_lost and are retried; restarting it",
                worker.label,
                worker.pid,
                describe_exit(code),
            )
            await worker.close_channel()
            backoff = FIRST_BACKOFF_S
            while True:
                await asyncio.sleep(backoff)  # backoff between restarts
                if self._stopping:
                    return
                fresh = WorkerProcess(worker.index, self.launch)
                try:
                    await fresh.start()
                except (WorkerStartError, OSError) as exc:
                    # OSError: the process could not even be created (EMFILE, ENOMEM…);
                    # raised here it would end the supervision of every worker unseen.
                    log.error("restarting %s failed: %s", worker.label, exc)
                    backoff = min(backoff * 2, MAX_BACKOFF_S)
                    continue
                self.workers[slot] = fresh
                self.restarts += 1
                if self._stopping:
                    await fresh.stop(self.launch.settings.final_state_timeout_s + 5)
                    return
                break

    def choose(self) -> WorkerProcess | None:
        """The worker to hand a session to (None: every worker is down)."""
        up = [w for w in self.workers if w.alive]
        if not up:
            return None
        worker = min(up, key=lambda w: (w.load, w.last_chosen))
        worker.last_chosen = next(self._order)
        return worker

    async def confirm_dead(self, worker: WorkerProcess, grace_s: float = 5.0) -> str:
        """Make sure ``worker`` is gone (killing it if its stream broke but it lives on).

        Only then may the front door record the end of a session it held: no
        two processes ever write the end of one attempt.
        """
        try:
            code = await asyncio.wait_for(worker.wait(), grace_s)
        except TimeoutError:
            log.error("%s stopped answering but still runs; killing it", worker.label)
            await worker.kill()
            code = await worker.wait()
        return describe_exit(code)

    async def stop(self) -> None:
        self._stopping = True
        grace = self.launch.settings.final_state_timeout_s + 5
        await asyncio.gather(*(w.stop(grace) for w in self.workers))
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._supervisor
