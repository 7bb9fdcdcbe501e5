"""Composite verdicts of one session: ``stalled``, ``is_successful``, ``is_task_successful``.

- ``is_successful`` is the strict AND over the scenario's success signals that
  produced a pass or fail. Unscored signals (a judge error) are left out and
  listed, so a judge outage never fails an agent; if nothing produced a verdict
  the composite is ``unscored`` when something was unscored, else
  ``not_applicable``.
- ``is_task_successful`` is the same without CLEAN_EXIT.
- A stalled session (the bridge counted fewer agent responses than
  ``min_agent_turns``) fails both composites whatever its signals say; the
  aggregation leaves it out of per-signal rates.
"""

from __future__ import annotations

from typing import Any

from recordings.models import Verdict
from scorer_service import signals
from scorer_service.context import ScoringContext
from scorer_service.scorers.base import SignalScore

_DECIDED = (Verdict.PASSED, Verdict.FAILED)


def composite(
    name: str, gating: list[str], by_signal: dict[str, SignalScore], stalled: bool
) -> SignalScore:
    if stalled:
        detail: dict[str, Any] = {"gating": gating, "reason": "stalled: too few agent turns"}
        return SignalScore(name, Verdict.FAILED, 0.0, detail)
    decided = {
        s: by_signal[s].verdict
        for s in gating
        if s in by_signal and by_signal[s].verdict in _DECIDED
    }
    unscored = [s for s in gating if s in by_signal and by_signal[s].verdict is Verdict.UNSCORED]
    failed = [s for s, v in decided.items() if v is Verdict.FAILED]
    detail = {
        "gating": gating,
        "decided": sorted(decided),
        "failed": failed,
        "unscored": unscored,
        "not_applicable": [s for s in gating if s not in decided and s not in unscored],
    }
    if not decided:
        verdict = Verdict.UNSCORED if unscored else Verdict.NOT_APPLICABLE
        return SignalScore(name, verdict, None, detail)
    ok = not failed
    return SignalScore(name, Verdict.PASSED if ok else Verdict.FAILED, 1.0 if ok else 0.0, detail)


def composites(ctx: ScoringContext, scores: list[SignalScore]) -> list[SignalScore]:
    by_signal = {s.signal: s for s in scores}
    gating = [str(s) for s in ctx.scenario.success_signals]
    task_gating = [s for s in gating if s != signals.CLEAN_EXIT]
    stall_detail: dict[str, Any] = {
        "agent_turns": ctx.session.agent_turns,
        "min_agent_turns": ctx.min_agent_turns,
    }
    if ctx.min_agent_turns <= 0:
        stall = SignalScore(signals.STALLED, Verdict.NOT_APPLICABLE, None, stall_detail)
    else:
        # "passed" = not stalled; the value is the bridge's agent turn count.
        verdict = Verdict.FAILED if ctx.stalled else Verdict.PASSED
        stall = SignalScore(signals.STALLED, verdict, float(ctx.session.agent_turns), stall_detail)
    return [
        composite(signals.IS_SUCCESSFUL, gating, by_signal, ctx.stalled),
        composite(signals.IS_TASK_SUCCESSFUL, task_gating, by_signal, ctx.stalled),
        stall,
    ]
