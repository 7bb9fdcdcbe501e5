"""TOOL_CALLS and CLAIMED_NOT_DONE: the agent's tool calls, from evidence it cannot shape.

- ``TOOL_CALLS`` checks the scenario's ``tool_call_expectations``
  (:mod:`.expectations`) against the calls the session's tool backend served
  (``source: backend``). Without a backend it checks the calls the agent
  reported (``source: reported``), and cannot decide (unscored,
  ``no_tool_evidence``) when the agent reported none: an agent that does not
  report its calls would fail every expectation unheard. The value is the
  share of expectations met; the detail holds one entry per expectation.
- ``CLAIMED_NOT_DONE`` fails when the agent reports a tool call (a
  ``ToolCall`` event) that the backend never served: no served call of that
  tool with the same arguments, or a call the agent reports as done that the
  backend answered with an error. A served call backs every report of it (a
  connector may carry one call twice: a pipecat bot's function-call frames
  and its ``action-applied`` message). Not applicable without a backend or
  when the agent reported no calls.

Both read only recorded events, so a changed expectation rescored judges the
recorded calls again without a new conversation.
"""

from __future__ import annotations

from typing import Any

from vae.recordings.models import Verdict
from vae.scorer_service import signals
from vae.scorer_service.backend_calls import BackendCall
from vae.scorer_service.context import ScoringContext, ToolCallInfo
from vae.scorer_service.scorer import SignalScore, passed_or_failed
from vae.scorer_service.scorers.expectations import Call, evaluate
from vae.tools.match import mismatch, show

NO_EVIDENCE = "no_tool_evidence"


def caller_turns(ctx: ScoringContext) -> list[float]:
    """When each caller turn was said (its final transcript), in order."""
    lines = [t for t in ctx.bot_transcripts if t.side == "user"]
    lines = lines or [t for t in ctx.transcripts if t.side == "user"]
    return sorted(t.t_s for t in lines)


def _reported(ctx: ScoringContext) -> list[ToolCallInfo]:
    return [c for c in ctx.tool_calls if c.side == "agent"]


def tool_calls_score(ctx: ScoringContext) -> SignalScore:
    items = ctx.scenario.tool_call_expectations
    if not items:
        detail: dict[str, Any] = {"reason": "no tool call expectations"}
        return SignalScore(signals.TOOL_CALLS, Verdict.NOT_APPLICABLE, None, detail)
    if ctx.tool_backend:
        source = "backend"
        calls = [Call(c.tool, c.arguments, c.t_s) for c in ctx.backend_calls]
    else:
        source = "reported"
        calls = [Call(c.name, c.arguments, c.t_s) for c in _reported(ctx)]
        if not calls:
            why = "no tool backend ran and the agent reported no tool calls"
            detail = {"source": source, "reason": why}
            return SignalScore(signals.TOOL_CALLS, Verdict.UNSCORED, None, detail,
                               f"{NO_EVIDENCE}: {why}")  # fmt: skip
    turns = caller_turns(ctx)
    rows = [{"index": i, **evaluate(item, calls, turns)} for i, item in enumerate(items)]
    passed = sum(1 for r in rows if r["passed"])
    failed = [r for r in rows if not r["passed"]]
    reason = failed[0]["reason"] if failed else f"all {len(rows)} expectations met"
    detail = {"source": source, "expectations": rows, "calls": len(calls), "reason": reason}
    verdict = passed_or_failed(not failed)
    return SignalScore(signals.TOOL_CALLS, verdict, passed / len(rows), detail)


def _same_call(claim: ToolCallInfo, served: BackendCall) -> bool:
    if claim.name != served.tool or served.arguments is None:
        return False
    return not mismatch(claim.arguments, served.arguments, exact=True, literal=True)


def claimed_not_done_score(ctx: ScoringContext) -> SignalScore:
    name = signals.CLAIMED_NOT_DONE
    if not ctx.tool_backend:
        why = "no tool backend ran: nothing to hold the agent's reports against"
        return SignalScore(name, Verdict.NOT_APPLICABLE, None, {"reason": why})
    claims = _reported(ctx)
    if not claims:
        why = "the agent reported no tool calls"
        return SignalScore(name, Verdict.NOT_APPLICABLE, None, {"reason": why})
    rows: list[dict[str, Any]] = []
    for claim in claims:
        same = [c for c in ctx.backend_calls if _same_call(claim, c)]
        # A report of success is backed by a served success first.
        backing = next((c for c in same if c.ok == (not claim.error)), same[0] if same else None)
        row: dict[str, Any] = {"name": claim.name, "arguments": claim.arguments,
                               "t_s": round(claim.t_s, 3)}  # fmt: skip
        if backing is None:
            served = [c for c in ctx.backend_calls if c.tool == claim.name]
            seen = f"; the backend served {claim.name} with {show(served[-1].arguments)}" if (
                served) else f"; the backend never served {claim.name}"  # fmt: skip
            row.update(served=False, reason=f"the agent reports {claim.name} "
                       f"{show(claim.arguments)}, never made to the backend{seen}")  # fmt: skip
        else:
            row.update(served=True, served_status=backing.status)
            if not claim.error and not backing.ok:
                row.update(served=False, reason=f"the agent reports {claim.name} as done; the "
                           f"backend answered it {backing.status}")  # fmt: skip
        rows.append(row)
    unbacked = [r for r in rows if not r["served"]]
    reason = unbacked[0]["reason"] if unbacked else (
        f"all {len(rows)} reported calls were served by the backend")  # fmt: skip
    detail = {"claims": rows, "reason": reason}
    return SignalScore(name, passed_or_failed(not unbacked), float(len(unbacked)), detail)


class ToolCallsScorer:
    name = "tool_calls"
    version = "1"
    needs_audio = False

    async def score(self, ctx: ScoringContext) -> list[SignalScore]:
        return [tool_calls_score(ctx), claimed_not_done_score(ctx)]
