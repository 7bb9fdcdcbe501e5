"""Scorings and flips as plain dicts, for ``--json`` and the scorer service.

The text the CLI prints (aligned tables, reasons beside failing signals,
unscored counts and causes) lives in ``cli/scoring/scoring_text.py``; this module keeps
only the JSON shapes, which the scorer side shares with the CLI.
"""

from __future__ import annotations

from typing import Any

from vae.recordings.models import ScoringRecord
from vae.scorer_service.ledger.aggregate import SessionOutcome
from vae.scorer_service.ledger.reasons import session_reason
from vae.scorer_service.ledger.scorings import Flip


def scoring_as_dict(
    scoring: ScoringRecord, outcomes: list[SessionOutcome] | None = None
) -> dict[str, Any]:
    """The JSON form the CLI prints with ``--json``."""
    data: dict[str, Any] = {
        "scoring_id": scoring.scoring_id,
        "run_id": scoring.run_id,
        "created_ns": scoring.created_ns,
        "status": scoring.status,
        "mode": scoring.mode,
        "superseded_by": scoring.superseded_by,
        "judge_model": scoring.judge_model,
        "prompt_hash": scoring.prompt_hash,
        "versions": scoring.versions,
        "config": scoring.config,
        "summary": scoring.summary,
        # Judged on redacted text (rescore --redact, or a run redacted as recorded or
        # imported), or judged before its text was redacted: None when neither.
        "redaction": _redaction(scoring),
    }
    if outcomes is not None:
        data["sessions"] = [
            {
                "session_id": o.session_id,
                "scenario_name": o.scenario_name,
                "domain": o.domain,
                # One line: why it failed or is unscored (a mishearing that explains it first).
                "reason": session_reason(o),
                "scores": [
                    {
                        "signal": s.signal,
                        "verdict": s.verdict.value,
                        "value": s.value,
                        "detail": s.detail,
                        "error": s.error,
                    }
                    for s in o.scores
                ],
            }
            for o in outcomes
        ]
    return data


def _redaction(scoring: ScoringRecord) -> Any:
    block = scoring.summary.get("redaction")
    if block:
        return block
    if scoring.config.get("redaction"):  # still running: its summary is not written yet
        return {"judged_on_redacted_text": True, "by": "rescore --redact"}
    return None


def flips_as_dicts(flips: list[Flip]) -> list[dict[str, Any]]:
    return [
        {
            "session_id": f.session_id,
            "scenario_name": f.scenario_name,
            "signal": f.signal,
            "verdict_a": f.verdict_a.value if f.verdict_a else None,
            "verdict_b": f.verdict_b.value if f.verdict_b else None,
            "value_a": f.value_a,
            "value_b": f.value_b,
        }
        for f in flips
    ]
