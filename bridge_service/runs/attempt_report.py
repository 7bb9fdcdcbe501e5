"""What the store and the run's watchers are told about each attempt.

Why a module of its own: what GetRun, WatchRun and ``vae runs show`` see about
an attempt — its ``session_started``, ``session_retrying`` and
``session_ended`` events (with their :class:`SessionSummary` and message), the
``superseded`` mark of a retried attempt, and the session row of an attempt
that never became a conversation — changes with what runs report, not with how
the executor schedules, dials and retries attempts
(:mod:`vae.bridge_service.runs.execute`, :mod:`vae.bridge_service.runs.attempt_runner`).

An attempt whose bots never arrive (pairing timeout), whose connector cannot
dial or that the bridge itself failed is still recorded as a session (0 turns,
unfinished, the stop reason and detail naming the cause), so it is visible and
retried like any stale one.
"""

from __future__ import annotations

import logging
import time

from vae.bridge_service.config import StopReason
from vae.bridge_service.runs.attempt import SessionResult
from vae.bridge_service.runs.model import RunEvent, RunEventKind, RunState, SessionSummary
from vae.bridge_service.session.plan import SessionPlan
from vae.recordings.models import SessionRecord, SessionStatus
from vae.recordings.write.writer import RecordingWriter

log = logging.getLogger("vae.bridge.runs")


async def emit_started(run: RunState, plan: SessionPlan) -> None:
    """Tell the run's watchers an attempt's session started (SESSION_STARTED)."""
    summary = SessionSummary(
        plan.run_id,
        plan.session_id,
        plan.scenario.name,
        plan.attempt,
        retry_reason=plan.retry_reason,
        modality=plan.settings.modality,
        clock=plan.settings.clock,
        bridge=_bridge(plan),
    )
    await run.emit(
        RunEvent(
            RunEventKind.SESSION_STARTED,
            run.run_id,
            run.done,
            run.total,
            f"{plan.scenario.name} attempt {plan.attempt}",
            session=summary,
        )
    )


async def record_retry(
    writer: RecordingWriter,
    run: RunState,
    scenario_name: str,
    result: SessionResult,
    attempt: int,
    why: str,
) -> None:
    """Mark a retried attempt superseded and announce the next one (SESSION_RETRYING)."""
    await writer.mark_superseded(result.session_id, f"retried: {why}")
    await run.emit(
        RunEvent(
            RunEventKind.SESSION_RETRYING,
            run.run_id,
            run.done,
            run.total,
            f"{scenario_name}: {why}; attempt {attempt + 1} in "
            f"{run.settings.auto_retry_backoff_s:g} s",
        )
    )


async def emit_ended(run: RunState, plan: SessionPlan, result: SessionResult) -> None:
    """Tell the run's watchers how an attempt ended (the SESSION_ENDED progress event)."""
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
        result.detail,
        modality=plan.settings.modality,
        clock=plan.settings.clock,
        bridge=_bridge(plan),
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


def _bridge(plan: SessionPlan) -> dict[str, object] | None:
    return None if plan.served_by is None else plan.served_by.to_dict()


async def record_unrun(
    writer: RecordingWriter, run: RunState, plan: SessionPlan, reason: StopReason, detail: str
) -> SessionResult:
    """Record an attempt that never became a conversation (0 turns, unfinished)."""
    result = await record_unrun_row(writer, plan, reason, detail)
    await emit_ended(run, plan, result)
    return result


async def record_unrun_row(
    writer: RecordingWriter, plan: SessionPlan, reason: StopReason, detail: str
) -> SessionResult:
    """The store's half of :func:`record_unrun` (a worker has no run to tell)."""
    now = time.time_ns()
    await writer.start_session(
        SessionRecord(
            plan.session_id,
            plan.run_id,
            plan.scenario.name,
            plan.attempt,
            SessionStatus.RUNNING,
            now,
            retry_reason=plan.retry_reason,
        )
    )
    await writer.put_session_mode(
        plan.session_id, modality=plan.settings.modality, clock=plan.settings.clock
    )
    await end_unrun(writer, plan, reason, detail, now)
    log.warning("%s attempt %d: %s", plan.scenario.name, plan.attempt, detail)
    return SessionResult(plan.session_id, reason, detail, False, 0, 0, now, now)


async def end_unrun(
    writer: RecordingWriter, plan: SessionPlan, reason: StopReason, detail: str, ended_ns: int
) -> None:
    """End the row of an attempt no conversation ran in: no turns, not clean, ``reason``;
    and which bridge served it, when one did."""
    await writer.end_session(
        plan.session_id,
        ended_ns=ended_ns,
        stop_reason=str(reason),
        stop_detail=detail,
        clean_exit=False,
        user_turns=0,
        agent_turns=0,
    )
    if plan.served_by is not None:
        await writer.put_session_bridge(plan.session_id, plan.served_by.to_dict())
