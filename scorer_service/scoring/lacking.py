"""Signals a recording cannot support are ``unscored``, never passed or failed.

Why: a recording imported from outside vae (``vae import calls``: audio and
perhaps a transcript of a real call) has no record of the agent's tool calls,
its final state, its LLM context or how the call ended. A scorer reading such
a session would see "no actions" or "no state" and report a failure that says
nothing about the agent — or, for a lenient check, a pass it never earned.
The importer declares what its recordings lack in the run's options
(``"lacks": ["tool_calls", "final_state", "llm_context", "end_reason"]``);
after scoring, every signal that needs a lacking input becomes ``unscored``
with the reason, so composites leave it out (``vae.scorer_service.scoring.composite``).

The judge signals only need the LLM context when the judge cannot read the
conversation instead: with ``include_conversation`` and recorded transcripts
they keep their verdict.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from vae.recordings.models import Verdict
from vae.scorer_service import signals
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.scorer import SignalScore

#: Signal -> the recorded input it cannot do without.
NEEDS = {
    signals.ACTION_MATCH: "tool_calls",
    signals.DB_STATE_MATCH: "final_state",
    signals.DB_STATE_ASSERTION: "final_state",
    signals.NL_ASSERTION: "llm_context",
    signals.JUDGE_PASSED: "llm_context",
    signals.CLEAN_EXIT: "end_reason",
}
_JUDGE = (signals.NL_ASSERTION, signals.JUDGE_PASSED)


def declared_lacks(run_options: dict[str, Any]) -> set[str]:
    value = run_options.get("lacks")
    return {str(v) for v in value} if isinstance(value, list) else set()


def mark_lacking(
    results: list[SignalScore],
    lacks: set[str],
    ctx: ScoringContext,
    *,
    judge_reads_conversation: bool,
) -> list[SignalScore]:
    """``results`` with each signal whose input the recording lacks turned ``unscored``."""
    if not lacks:
        return results
    out = []
    for r in results:
        need = NEEDS.get(r.signal)
        if r.signal in _JUDGE and judge_reads_conversation and ctx.transcripts:
            need = None
        # Already unscored for another cause: the missing input is the cause to show.
        if need in lacks and r.verdict in (Verdict.PASSED, Verdict.FAILED, Verdict.UNSCORED):
            detail = {**r.detail, "lacks": need, "verdict_without_it": str(r.verdict)}
            reason = f"the recording has no {need.replace('_', ' ')}: {r.signal} cannot be judged"
            out.append(
                replace(r, verdict=Verdict.UNSCORED, value=None, detail=detail, error=reason)
            )
        else:
            out.append(r)
    return out
