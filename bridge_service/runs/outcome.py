"""What an attempt's end means for its run: retry or not, failed or not, the run's status.

Why a module of its own: these rules decide whether a run may read
``completed``, so they must be easy to find and test, and they read the one
table of finished and unfinished stop reasons (``vae.recordings.stop_reasons``)
that resume and the scorer read too.

- An attempt that is **unfinished** (a peer that never joined, a connector
  that failed, the bridge that failed) is retried like a stale one, and the
  retry reason says the real cause, not "0 turns".
- A scenario whose last attempt is unfinished (other than by a cancel), ended
  with a bot failure or with no turns, makes the run ``failed`` — also when a
  resume keeps that attempt (:func:`kept_failure`).
- A run reads ``completed`` only when every scenario ran to a finished end;
  an exception while running it makes it ``failed`` with the error.
"""

from __future__ import annotations

from vae.bridge_service.config import RunSettings, StopReason
from vae.bridge_service.runs.attempt import SessionResult
from vae.bridge_service.runs.model import RunState
from vae.recordings.models import RunStatus, SessionRecord
from vae.recordings.stop_reasons import is_finished, normalise

_FAILED_REASONS = {
    StopReason.BOT_ERROR,
    StopReason.BOT_DISCONNECTED,
    StopReason.AGENT_CRASHED,
    StopReason.AGENT_SILENT,
}
_CUT = (StopReason.CANCELLED, StopReason.SHUTDOWN)
#: Not retried: a cut, or a first speaker that stayed silent (the same bots would
#: only wait for each other again).
_NO_RETRY = (*_CUT, StopReason.FIRST_SPEAKER_SILENT)


def retry_reason(result: SessionResult, settings: RunSettings) -> str:
    """Why ``result`` should be attempted again ("" when it should not)."""
    if result.stop_reason in _NO_RETRY:
        return ""
    turns = result.user_turns + result.agent_turns
    if not is_finished(result.stop_reason) and settings.auto_resume_on_stale:
        detail = f": {result.detail}" if result.detail else ""
        return f"{result.stop_reason}{detail}"
    if turns == 0 and settings.auto_resume_on_stale:
        return "stale: 0 conversation turns"
    if (
        settings.min_agent_turns
        and result.agent_turns < settings.min_agent_turns
        and settings.auto_resume_on_insufficient_turns
    ):
        return f"insufficient agent turns: {result.agent_turns} < {settings.min_agent_turns}"
    return ""


def scenario_failure(name: str, result: SessionResult | None, cancelled: bool) -> str:
    """Why scenario ``name`` makes its run fail ("" when it does not)."""
    if result is None:
        return "" if cancelled else f"{name}: never attempted"
    turns = result.user_turns + result.agent_turns
    return _failure(name, result.stop_reason, result.detail, turns)


def kept_failure(session: SessionRecord) -> str:
    """Why a scenario a resume keeps (its last attempt, ``session``) makes the run fail.

    A resume re-runs only unfinished attempts; one that ended ``bot_error`` keeps
    failing the run it failed before.
    """
    turns = session.user_turns + session.agent_turns
    reason = normalise(session.stop_reason)
    return _failure(session.scenario_name, reason, session.stop_detail, turns)


def _failure(name: str, stop_reason: str, detail: str, turns: int) -> str:
    if stop_reason in _CUT:
        return ""
    shown = f" ({detail})" if detail else ""
    if not is_finished(stop_reason) or stop_reason in _FAILED_REASONS:
        return f"{name}: {stop_reason}{shown}"
    if turns == 0:
        return f"{name}: 0 conversation turns ({stop_reason})"
    return ""


def final_status(run: RunState) -> tuple[RunStatus, str]:
    """The run's status and the line that says why, once its scenarios are done."""
    resume = f"resume with: vae run --resume {run.run_id}"
    if run.storage_error:
        return RunStatus.FAILED, f"{run.storage_error}; the run failed"
    if run.shutting_down:
        return RunStatus.FAILED, f"the bridge shut down; {resume}"
    if run.error:
        return RunStatus.FAILED, f"{run.error}; {resume}"
    if run.cancel.is_set():
        return RunStatus.CANCELLED, f"cancelled; {resume}"
    if run.failures:
        shown = "; ".join(run.failures[:5])
        more = f" (+{len(run.failures) - 5} more)" if len(run.failures) > 5 else ""
        return RunStatus.FAILED, f"{len(run.failures)} scenario(s) failed: {shown}{more}"
    if run.done < run.total:
        return RunStatus.FAILED, f"only {run.done} of {run.total} scenarios ran; {resume}"
    return RunStatus.COMPLETED, "all scenarios done"
