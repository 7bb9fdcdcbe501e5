"""One step (or the soak) of ``vae load`` as an ordinary run of the bridge.

Each step is one run, named ``<load id>-step<i>-c<level>`` and tagged
``load``, ``<load id>``, ``load-step-<i>`` and ``concurrency-<level>`` (a
soak: ``…-soak-c<level>``, tagged ``soak``), so ``vae report``, ``rescore``,
``compare`` and ``export`` work on it like on any run. Its scenarios are the
suite's, round-robin: call k plays scenario ``k mod K`` as trial
``name#<k div K + 1>`` (repeated trials, so reports group them). Retries
are off: a retried call would hide a failure and add load the step did not
ask for.

- ``--calls N``: the run holds exactly N calls (inline copies in
  round-robin order); it ends when they have.
- a duration (``--step-duration``, ``--soak``): the run is planned with
  more calls than can fit (:func:`vae.cli.load.load_plan.planned_calls`),
  and drained when the time is up (``CancelRun`` with ``drain``): calls
  under way finish and count, nothing new starts, unstarted calls leave the
  run. The time is wall time on the real clock; on the virtual clock it is
  session time, estimated as the session time of the finished calls over
  the number of slots (the calls under way at that moment still finish, so
  a virtual step runs about one call longer than asked). A run whose plan
  runs out first is marked ``ran_out``.
- an interrupt (Ctrl-C) cancels the run: the calls under way end
  ``cancelled`` and stay recorded, and the step is marked partial.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

import click

from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.cli.load.load_plan import planned_calls
from vae.cli.runs.run_start import start_run
from vae.recordings.backends.locator import Locator
from vae.recordings.trials import trial_name

#: Most bytes of scenarios sent inline in one StartRun (the bridge takes 4 MiB messages).
MAX_INLINE_BYTES = 3 * 1024 * 1024


@dataclass(frozen=True)
class StepRun:
    run_id: str
    wall_s: float
    partial: bool = False
    ran_out: bool = False
    status: str = ""
    error: str = ""


def copies(docs: list[dict[str, Any]], calls: int) -> list[dict[str, Any]]:
    """``calls`` scenarios, round-robin over ``docs``, each a numbered trial."""
    k = len(docs)
    return [
        {**docs[i % k], "name": trial_name(str(docs[i % k]["name"]), i // k + 1)}
        for i in range(calls)
    ]


def request_for(
    docs: list[dict[str, Any]],
    options: bridge_pb2.RunOptions,
    *,
    calls: int | None,
    seconds: float | None,
    level: int,
    run_id: str,
) -> bridge_pb2.StartRunRequest:
    """The StartRun of one step or soak (see the module)."""
    options = bridge_pb2.RunOptions.FromString(options.SerializeToString())
    options.concurrency = level
    if calls is not None:
        text = json.dumps(copies(docs, calls))
        if len(text) > MAX_INLINE_BYTES:
            raise click.UsageError(
                f"--calls {calls}: the calls' scenarios ({len(text) // 1024} KiB) exceed what one "
                "request carries; use fewer calls or --step-duration"
            )
    else:
        assert seconds is not None
        repeat, _ = planned_calls(level, seconds, len(docs))
        text = json.dumps(docs)
        options.repeat = repeat
    return bridge_pb2.StartRunRequest(
        sources=[bridge_pb2.ScenarioSource(inline=text)], options=options, run_id=run_id
    )


class Deadline:
    """When a timed run is drained: wall time on the real clock; on the virtual one, when
    the slots' session time, counting the calls under way at the mean length of the
    finished ones, reaches the duration (so the calls still under way end near it)."""

    def __init__(self, seconds: float | None, virtual: bool, slots: int, db: Locator) -> None:
        self.seconds, self.virtual, self.slots, self.db = seconds, virtual, slots, db
        self._t0 = time.monotonic()
        self._session_s = 0.0
        self._finished = 0
        self._running = 0
        self._pending: list[str] = []

    def wall_left(self) -> float | None:
        if self.seconds is None or self.virtual:
            return None
        return max(0.0, self.seconds - (time.monotonic() - self._t0))

    def left(self) -> float:
        """Seconds of the duration left (virtual: by the finished calls' session time)."""
        if self.seconds is None:
            return 0.0
        if not self.virtual:
            return self.wall_left() or 0.0
        return max(0.0, self.seconds - self._session_s / self.slots)

    def started(self) -> None:
        self._running += 1

    async def ended(self, session_id: str) -> bool:
        """A call ended: True when the virtual time is up."""
        self._running = max(0, self._running - 1)
        if self.seconds is None or not self.virtual:
            return False
        self._pending.append(session_id)
        found = await asyncio.to_thread(_session_seconds, self.db, list(self._pending))
        for sid, seconds in found.items():
            self._session_s += seconds
            self._finished += 1
            self._pending.remove(sid)
        if not self._finished:
            return False
        under_way = self._running + len(self._pending)
        projected = self._session_s + under_way * self._session_s / self._finished
        return projected / self.slots >= self.seconds


def _session_seconds(db: Locator, session_ids: list[str]) -> dict[str, float]:
    """Session time of those calls whose clock record is committed already."""
    from vae.recordings.read.reader import RecordingReader

    out = {}
    with RecordingReader(db) as reader:
        for sid in session_ids:
            clock = reader.session_clock(sid)
            if clock is not None and isinstance(clock.get("session_s"), int | float):
                out[sid] = float(clock["session_s"])
    return out


async def run_one(
    stub: bridge_pb2_grpc.BridgeServiceAsyncStub,
    request: bridge_pb2.StartRunRequest,
    deadline: Deadline,
    interrupt: asyncio.Event,
    started: list[str],
) -> StepRun:
    """Run one step to its end (drained at its deadline, cancelled on an interrupt)."""
    t0 = time.monotonic()
    run_id = (await start_run(stub, request, started)).run.run_id
    events = stub.WatchRun(bridge_pb2.WatchRunRequest(run_id=run_id))
    drained = partial = False

    async def drain() -> None:
        nonlocal drained
        if not drained:
            drained = True
            await stub.CancelRun(bridge_pb2.CancelRunRequest(run_id=run_id, drain=True))

    async def watch() -> None:
        async for event in events:
            if event.kind == bridge_pb2.RUN_EVENT_KIND_SESSION_STARTED:
                deadline.started()
            if event.kind == bridge_pb2.RUN_EVENT_KIND_SESSION_ENDED and await deadline.ended(
                event.session.session.session_id
            ):
                await drain()
            if event.kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED:
                return

    async def timer() -> None:
        left = deadline.wall_left()
        if left is None:
            await asyncio.Event().wait()  # no wall deadline: wait to be cancelled
        await asyncio.sleep(left or 0.0)  # the step's own length, not a synchronisation
        await drain()

    watching = asyncio.ensure_future(watch())
    timing = asyncio.ensure_future(timer())
    stopping = asyncio.ensure_future(interrupt.wait())
    pending = {watching, timing, stopping}
    try:
        while not watching.done():
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            pending -= done
            if stopping in done:
                partial = True
                timing.cancel()
                pending.discard(timing)
                await stub.CancelRun(bridge_pb2.CancelRunRequest(run_id=run_id))
            if timing in done and not timing.cancelled():
                timing.result()  # a drain the bridge refused fails the step
        watching.result()
    finally:
        for task in (watching, timing, stopping):
            task.cancel()
        await asyncio.gather(watching, timing, stopping, return_exceptions=True)
    final = (await stub.GetRun(bridge_pb2.GetRunRequest(run_id=run_id))).run
    status = bridge_pb2.RunStatus.Name(final.status).removeprefix("RUN_STATUS_").lower()
    ran_out = deadline.seconds is not None and not drained and not partial
    return StepRun(run_id, time.monotonic() - t0, partial, ran_out, status, final.error)
