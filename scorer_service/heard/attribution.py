"""Tracing a failure back to a mishearing: "the agent heard X where the caller said Y".

Why: when an agent books the 21st, the question a reader has is whether it
misheard the caller or misunderstood them. HEARD_CORRECTLY's critical
mismatches answer the first half; this module connects them to the failure.
A failing signal is *attributed* to a mismatch when the value it found wrong
carries what the agent heard and the value it expected carries what the
caller said (or, for something the agent did not hear at all, the expected
value has it and the recorded one lacks it). The compared values per signal:

- ACTION_MATCH and JUDGE_PASSED: the reference answer against the recorded
  write actions;
- DB_STATE_MATCH: each differing path's expected against its recorded value;
- DB_STATE_ASSERTION: each failing assertion's expected against actual;
- NL_ASSERTION: each failing assertion's text against what the agent said.

Only the agent's own HEARD reports are used: a transcription standing in for
them says what reached the agent, not what it acted on. The attributed signal
keeps its verdict and gains ``detail["misheard"]``; every reader of a reason
(CLI, JSON, report, comparison) names it first
(:func:`vae.scorer_service.ledger.reasons.session_reason`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from vae.recordings.models import Verdict
from vae.scorer_service import signals
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.heard.compare import mismatch_text
from vae.scorer_service.heard.critical import Item, contains, value_items
from vae.scorer_service.scorer import SignalScore

Pair = tuple[Any, Any]


def _rows(detail: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = detail.get(key)
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []


def _compared(score: SignalScore, ctx: ScoringContext) -> list[Pair]:
    """(expected, recorded) values the failing signal compared."""
    d = score.detail
    if score.signal == signals.ACTION_MATCH:
        return [(d.get("reference"), d.get("prediction"))]
    if score.signal == signals.JUDGE_PASSED:
        return [(ctx.scenario.reference_answer, ctx.write_actions)]
    if score.signal == signals.DB_STATE_MATCH:
        sides = d.get("sides")
        return [
            (row.get("expected"), row.get("actual"))
            for info in (sides.values() if isinstance(sides, dict) else [])
            if isinstance(info, dict)
            for row in _rows(info, "diff")
        ]
    if score.signal == signals.DB_STATE_ASSERTION:
        return [
            (r.get("expected"), r.get("actual"))
            for r in _rows(d, "verdicts")
            if not r.get("passed")
        ]
    if score.signal == signals.NL_ASSERTION:
        said = " ".join(t.text for t in ctx.bot_transcripts if t.side == "agent")
        return [
            (r.get("assertion"), said) for r in _rows(d, "verdicts") if r.get("passed") is False
        ]
    return []


def _item(kind: str, value: Any) -> Item | None:
    return Item(kind, str(value), 0, 1) if value else None


def explains(mismatch: dict[str, Any], pairs: Iterable[Pair]) -> bool:
    """Whether ``mismatch`` accounts for one of the (expected, recorded) pairs."""
    kind = str(mismatch.get("kind", ""))
    said = _item(kind, mismatch.get("said_value"))
    heard = _item(kind, mismatch.get("heard_value"))
    for expected, recorded in pairs:
        want, got = value_items(expected), value_items(recorded)
        if heard is not None:
            if (
                contains(got, heard)
                and not contains(want, heard)
                and (said is None or contains(want, said))
            ):
                return True
        elif said is not None and contains(want, said) and not contains(got, said):
            return True
    return False


def attribute(results: list[SignalScore], ctx: ScoringContext) -> list[SignalScore]:
    """``results`` with each failing signal a critical mismatch explains marked ``misheard``."""
    heard = next((r for r in results if r.signal == signals.HEARD_CORRECTLY), None)
    if heard is None or heard.detail.get("heard_source") != "bots":
        return results
    mismatches = [m for m in heard.detail.get("mismatches") or [] if isinstance(m, dict)]
    if not mismatches:
        return results
    out = []
    for r in results:
        if r.verdict is Verdict.FAILED and r.signal != signals.HEARD_CORRECTLY:
            pairs = _compared(r, ctx)
            found = next((m for m in mismatches if explains(m, pairs)), None)
            if found is not None:
                misheard = {
                    "text": mismatch_text(found),
                    "said": found.get("said", ""),
                    "heard": found.get("heard", ""),
                    "kind": found.get("kind", ""),
                    "turn": found.get("turn", 0),
                }
                r = replace(r, detail={**r.detail, "misheard": misheard})
        out.append(r)
    return out
