"""CLEAN_EXIT by the end policy, and token usage per side.

End policies (the bridge's ``EndPolicy``):

- ``tool-only`` (default): only the agent's end tool is a clean exit;
- ``valid-terminal-state``: also the user's hang-up (or a replayed caller's
  recording coming to its end, ``replay_finished``), or an inactivity timeout
  whose last words were the user's (the agent answered and the caller had
  nothing more to say).

A session still running (no stop reason) is not applicable: it has not exited.
An attempt that did not finish (cancelled, a peer that never joined, a crashed
import ...: ``vae.recordings.stop_reasons``) is ``unscored``: how it ended says
nothing about the agent.
Stop reasons are read in any spelling the store may hold (``end_tool``,
``STOP_REASON_END_TOOL``, the established ``[EXIT]``/``[TIMEOUT]``), through
``vae.recordings.stop_reasons.normalise``: the one table the bridge and resume read.
"""

from __future__ import annotations

from vae.recordings.models import Verdict
from vae.recordings.stop_reasons import describe, is_finished, normalise, unfinished_cause
from vae.scorer_service import signals
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.scorer import SignalScore, info, passed_or_failed


def is_clean_exit(reason: str, policy: str, last_speaker: str | None) -> bool:
    if reason == "end_tool":
        return True
    if policy != "valid-terminal-state":
        return False
    if reason in ("user_hang_up", "replay_finished"):
        return True
    return reason == "inactivity_timeout" and last_speaker == "user"


class CleanExitScorer:
    name = "clean_exit"
    version = "1"
    needs_audio = False

    async def score(self, ctx: ScoringContext) -> list[SignalScore]:
        reason = normalise(ctx.session.stop_reason)
        detail: dict[str, object] = {
            "stop_reason": ctx.session.stop_reason,
            "end_policy": ctx.end_policy,
        }
        if not reason:
            detail["reason"] = "the session has not ended"
            return [SignalScore(signals.CLEAN_EXIT, Verdict.NOT_APPLICABLE, None, detail)]
        if not is_finished(reason):
            detail["reason"] = describe(reason)
            cause = unfinished_cause(reason)
            return [SignalScore(signals.CLEAN_EXIT, Verdict.UNSCORED, None, detail, cause)]
        spoken = [t for t in ctx.transcripts if t.text.strip()]
        last = spoken[-1].side if spoken else None
        detail["last_speaker"] = last
        ok = is_clean_exit(reason, ctx.end_policy, last)
        return [SignalScore(signals.CLEAN_EXIT, passed_or_failed(ok), None, detail)]


class TokenUsageScorer:
    """Token usage per side, summed from the bots' TokenUsage events."""

    name = "tokens"
    version = "1"
    needs_audio = False

    async def score(self, ctx: ScoringContext) -> list[SignalScore]:
        out: list[SignalScore] = []
        for side in ("user", "agent"):
            totals = ctx.tokens.get(side)
            if totals is None:
                continue
            out.append(info(signals.tokens_signal(side, "calls"), float(totals.calls)))
            out.append(info(signals.tokens_signal(side, "prompt"), float(totals.prompt)))
            out.append(info(signals.tokens_signal(side, "completion"), float(totals.completion)))
        return out
