"""Composite verdicts of one session: ``stalled``, ``is_successful``, ``is_task_successful``.

The rule (``docs/scoring.md``): a signal is passed or failed only when decided
from recorded evidence; whatever could not be decided is ``unscored`` with its
cause. So:

- ``is_successful`` is the strict AND over the scenario's success signals.
  Any gating signal ``failed`` makes it ``failed`` (that is evidence); else any
  gating signal ``unscored`` — a judge error, no judge, a signal not scored at
  all — makes it ``unscored``, never ``passed``; else ``passed`` when something
  was decided, ``not_applicable`` when nothing applies. ``detail.causes``
  names why it is unscored.
- An attempt that did not finish (``vae.recordings.stop_reasons``: cancelled,
  shutdown, a peer that never joined, a crashed import ...) is never passed or
  failed: both composites are ``unscored`` with the cause ``unfinished: <reason>``.
- ``is_task_successful`` is the same without CLEAN_EXIT.
- A stalled session fails both composites whatever its signals say, and its
  ``stalled`` signal is ``failed`` (the aggregation leaves it out of
  per-signal rates and lists it under ``stalled``). A finished attempt is
  stalled when the bridge counted 0 conversation turns (``user_turns +
  agent_turns``; reason ``0 conversation turns``: its other signals can only
  pass vacuously, e.g. an expected DB equal to the initial one), or fewer
  agent responses than ``min_agent_turns`` (reason ``stalled: too few agent
  turns``). An unfinished attempt is never stalled: ``stalled`` is
  ``unscored`` with the same cause as the composites.
- ``bot_errors`` (informational) lists the errors the bots reported during
  the call, so the rescore output and the report show them beside the session.
"""

from __future__ import annotations

from typing import Any

from vae.recordings.models import Verdict
from vae.recordings.stop_reasons import is_finished, unfinished_cause
from vae.scorer_service import signals
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.scorer import SignalScore

_DECIDED = (Verdict.PASSED, Verdict.FAILED)
#: The cause of a gating signal no scorer produced (e.g. ``--only`` left its scorer out).
NOT_SCORED = "not_scored"


def cause_of(score: SignalScore | None) -> str:
    """The short cause of an unscored signal: the error's prefix (``judge_error``, ``no_judge``)."""
    if score is None:
        return NOT_SCORED
    head = score.error.split(":", 1)[0].strip() if score.error else ""
    return head or "unscored"


def composite(
    name: str,
    gating: list[str],
    by_signal: dict[str, SignalScore],
    stalled: str,
    unfinished: str = "",
) -> SignalScore:
    """One composite; ``stalled`` is why the session stalled ("" when it did not)."""
    if stalled and not unfinished:
        detail: dict[str, Any] = {"gating": gating, "reason": stalled}
        return SignalScore(name, Verdict.FAILED, 0.0, detail)
    decided = {
        s: by_signal[s].verdict
        for s in gating
        if s in by_signal and by_signal[s].verdict in _DECIDED
    }
    unscored = [s for s in gating if s not in by_signal or by_signal[s].verdict is Verdict.UNSCORED]
    failed = [s for s, v in decided.items() if v is Verdict.FAILED]
    causes = sorted({cause_of(by_signal.get(s)) for s in unscored})
    detail = {
        "gating": gating,
        "decided": sorted(decided),
        "failed": failed,
        "unscored": unscored,
        "causes": causes,
        "not_applicable": [s for s in gating if s not in decided and s not in unscored],
    }
    if unfinished:
        detail["causes"] = [unfinished]
        detail["reason"] = "the attempt did not finish: no verdict on the agent"
        return SignalScore(name, Verdict.UNSCORED, None, detail, unfinished)
    if failed:
        return SignalScore(name, Verdict.FAILED, 0.0, detail)
    if unscored:
        return SignalScore(name, Verdict.UNSCORED, None, detail, ", ".join(causes))
    if not decided:
        return SignalScore(name, Verdict.NOT_APPLICABLE, None, detail)
    return SignalScore(name, Verdict.PASSED, 1.0, detail)


def stall_reason(ctx: ScoringContext) -> str:
    """Why a finished attempt counts as stalled ("" when it does not)."""
    if ctx.session.user_turns + ctx.session.agent_turns == 0:
        return "0 conversation turns"
    if ctx.stalled:
        return "stalled: too few agent turns"
    return ""


def composites(ctx: ScoringContext, scores: list[SignalScore]) -> list[SignalScore]:
    by_signal = {s.signal: s for s in scores}
    gating = [str(s) for s in ctx.scenario.success_signals]
    task_gating = [s for s in gating if s != signals.CLEAN_EXIT]
    reason = ctx.session.stop_reason
    unfinished = "" if is_finished(reason) else unfinished_cause(reason)
    stalled = "" if unfinished else stall_reason(ctx)
    stall_detail: dict[str, Any] = {
        "user_turns": ctx.session.user_turns,
        "agent_turns": ctx.session.agent_turns,
        "min_agent_turns": ctx.min_agent_turns,
    }
    # "passed" = not stalled; the value is the bridge's agent turn count.
    turns = float(ctx.session.agent_turns)
    if unfinished:
        stall_detail["causes"] = [unfinished]
        stall_detail["reason"] = "the attempt did not finish: no verdict on the agent"
        stall = SignalScore(signals.STALLED, Verdict.UNSCORED, None, stall_detail, unfinished)
    elif stalled:
        stall_detail["reason"] = stalled
        stall = SignalScore(signals.STALLED, Verdict.FAILED, turns, stall_detail)
    elif ctx.min_agent_turns <= 0:
        stall = SignalScore(signals.STALLED, Verdict.NOT_APPLICABLE, None, stall_detail)
    else:
        stall = SignalScore(signals.STALLED, Verdict.PASSED, turns, stall_detail)
    out = [
        composite(signals.IS_SUCCESSFUL, gating, by_signal, stalled, unfinished),
        composite(signals.IS_TASK_SUCCESSFUL, task_gating, by_signal, stalled, unfinished),
        stall,
    ]
    if ctx.bot_errors:
        errors: dict[str, Any] = {"errors": list(ctx.bot_errors)}
        out.append(
            SignalScore(
                signals.BOT_ERRORS, Verdict.NOT_APPLICABLE, float(len(ctx.bot_errors)), errors
            )
        )
    return out
