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

Any exception while running the run marks it ``failed`` with the error
(``vae.bridge_service.runs.outcome`` holds these rules): a run never reads
``completed`` with scenarios missing. One attempt — dialling or pairing its
sides, running it here or elsewhere, recording one that could not run — is
:mod:`vae.bridge_service.runs.attempt_runner`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass

from vae.bridge_service.runs.attempt import SessionResult
from vae.bridge_service.runs.attempt_report import record_retry
from vae.bridge_service.runs.attempt_runner import AttemptRunner, RunCancelled
from vae.bridge_service.runs.model import RunEvent, RunEventKind, RunState
from vae.bridge_service.runs.outcome import final_status, scenario_failure
from vae.bridge_service.runs.outcome import retry_reason as _retry_reason
from vae.bridge_service.runs.pacing import Drained, before_first_attempt, drop_unstarted
from vae.recordings.errors import StoreError
from vae.recordings.models import RunStatus
from vae.recordings.scenarios.model import Scenario
from vae.recordings.stop_reasons import is_finished

log = logging.getLogger("vae.bridge.runs")


@dataclass(frozen=True)
class Todo:
    scenario: Scenario
    first_attempt: int = 1
    retry_reason: str = ""


def retry_reason(result: SessionResult, run: RunState) -> str:
    return _retry_reason(result, run.settings)


class RunExecutor(AttemptRunner):
    """Runs a run's scenarios, each through attempts until one needs no retry."""

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
            await drop_unstarted(self.writer, run)
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

    async def _scenario(self, run: RunState, item: Todo, sem: asyncio.Semaphore) -> None:
        attempt, reason, retries = item.first_attempt, item.retry_reason, 0
        result: SessionResult | None = None
        try:
            while True:
                async with sem:
                    if run.cancel.is_set():
                        raise RunCancelled
                    if result is None:
                        await before_first_attempt(run)
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
        except Drained:
            run.dropped.append(item.scenario.name)
            return
        why = scenario_failure(item.scenario.name, result, run.cancel.is_set())
        if why:
            run.failures.append(why)
        if result is not None and is_finished(result.stop_reason):
            run.done += 1
