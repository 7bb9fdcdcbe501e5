"""What a scoring could not decide: unscored sessions and their causes, and bot errors.

Why: a success rate is computed over decided sessions only, so it must never
be shown without the number of sessions it leaves out and why (a judge that
failed, no judge, an unfinished attempt). The CLI, the JSON summary and the
report all read this one block from the scoring's summary:

``unscored``: ``{"sessions": N, "causes": {cause: n}, "gating": M,
"scenarios": [...]}`` — ``sessions`` counts sessions whose ``is_successful``
is unscored; ``gating`` counts sessions with at least one gating signal
unscored (also those failed on another signal); ``causes`` counts each cause
once per session; sessions still running when their bridge stopped are not
scored at all and counted as ``unfinished: never ended`` (listed by session
id). ``bot_errors``: ``{scenario: [lines]}``. A session a scoring holds no
verdict for at all gets its cause from :func:`missing_cause` (the report's
sessions and the gate's cases both show it).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from vae.recordings.models import SessionRecord, Verdict
from vae.recordings.stop_reasons import is_finished, unfinished_cause
from vae.scorer_service import signals
from vae.scorer_service.ledger.aggregate import SessionOutcome


def _causes(outcome: SessionOutcome) -> list[str]:
    score = outcome.get(signals.IS_SUCCESSFUL)
    if score is None:
        return []
    causes = score.detail.get("causes")
    return [str(c) for c in causes] if isinstance(causes, list) else []


def missing_cause(session: SessionRecord) -> str:
    """Why a scoring holds no verdict for ``session`` (the unscored block's cause)."""
    if session.ended_ns is None:
        return unfinished_cause(None)  # "unfinished: never ended", as rescore counts it
    if not is_finished(session.stop_reason):
        return unfinished_cause(session.stop_reason)  # e.g. an imported crashed attempt
    return "not scored by this scoring"


def gating_unscored(outcome: SessionOutcome) -> bool:
    score = outcome.get(signals.IS_SUCCESSFUL)
    if score is None:
        return False
    return score.verdict is Verdict.UNSCORED or bool(score.detail.get("unscored"))


def unscored_block(
    outcomes: list[SessionOutcome], never_ended: list[str] | None = None
) -> dict[str, Any]:
    """The block above; ``never_ended`` are session ids left running (not scored at all)."""
    causes: Counter[str] = Counter()
    sessions = gating = len(never_ended or [])
    if sessions:
        causes[unfinished_cause(None)] = sessions  # "unfinished: never ended"
    scenarios: list[str] = list(never_ended or [])
    for o in outcomes:
        score = o.get(signals.IS_SUCCESSFUL)
        if score is not None and score.verdict is Verdict.UNSCORED:
            sessions += 1
            scenarios.append(o.scenario_name)
        if gating_unscored(o):
            gating += 1
            causes.update(set(_causes(o)))
    return {
        "sessions": sessions,
        "gating": gating,
        "causes": dict(sorted(causes.items())),
        "scenarios": sorted(scenarios),
    }


def bot_errors_block(outcomes: list[SessionOutcome]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for o in outcomes:
        score = o.get(signals.BOT_ERRORS)
        errors = None if score is None else score.detail.get("errors")
        if isinstance(errors, list) and errors:
            out[o.scenario_name] = [str(e) for e in errors]
    return out


def causes_text(block: dict[str, Any]) -> str:
    causes = block.get("causes") or {}
    return ", ".join(f"{k}: {v}" for k, v in causes.items()) or "unknown"


def unscored_line(summary: dict[str, Any]) -> str:
    """One line: how many sessions have an unscored gating signal, and why ("" when none)."""
    block = summary.get("unscored")
    if not isinstance(block, dict) or not block.get("gating"):
        return ""
    return (
        f"{block['gating']} session(s) have an unscored gating signal "
        f"({causes_text(block)}); {block.get('sessions', 0)} of them have no verdict "
        "and are left out of the success rate"
    )
