"""When a run starts its scenarios: the ramp-up, and a drain that starts no more.

Why: ``vae load`` measures an agent at one level of concurrency after
another. It may raise a level gradually (``RunOptions.ramp_up_s``: the k-th of
the first ``concurrency`` sessions starts (k-1) x ramp_up_s / concurrency
seconds after the first), and it ends a timed step or a soak by draining the
run (``CancelRunRequest.drain``): nothing new starts, the calls under way end
as calls do and are scored like any call, where a cancel would cut them off.
A drained run plans more scenarios than it will start; those never started
are dropped from it when it ends (their ``run_scenarios`` rows deleted, its
total shrunk), so the run reads ``completed`` when every call it started
finished, and every later command sees only the calls that happened.

The executor (:mod:`vae.bridge_service.runs.execute`) calls
:func:`before_first_attempt` inside a scenario's concurrency slot and
:func:`drop_unstarted` once the run's scenarios are done.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from vae.bridge_service.runs.attempt_runner import RunCancelled
from vae.bridge_service.runs.model import RunState
from vae.recordings.errors import StoreError
from vae.recordings.write.writer import RecordingWriter

log = logging.getLogger("vae.bridge.runs")


class Drained(Exception):
    """The run drains: this scenario is not started (and leaves the run)."""


async def before_first_attempt(run: RunState) -> None:
    """Hold a scenario's first attempt for its turn in the ramp-up; refuse it when draining.

    Called in the scenario's concurrency slot, so the slot stays taken while
    it waits. A cancel ends the wait at once; after a drain the scenario does not start.
    """
    if run.draining:
        raise Drained
    turn = run.started
    run.started += 1
    ramp, slots = run.settings.ramp_up_s, run.settings.concurrency
    if ramp <= 0 or turn == 0 or turn >= slots:
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(run.cancel.wait(), turn * ramp / slots)
    if run.cancel.is_set():
        raise RunCancelled
    if run.draining:
        raise Drained


def drain(run: RunState) -> None:
    """Start no new scenario of ``run``; what is under way goes on."""
    if not run.draining:
        log.info("run %s drains: no new session starts", run.run_id)
    run.draining = True


async def drop_unstarted(writer: RecordingWriter, run: RunState) -> None:
    """Take the scenarios a drain left unstarted out of the run (store and total)."""
    if not run.dropped:
        return
    run.total -= len(run.dropped)
    with contextlib.suppress(StoreError):  # a failed store fails the run anyway
        await writer.drop_run_scenarios(run.run_id, run.dropped)
    log.info("run %s drained: %d scenarios never started", run.run_id, len(run.dropped))
