"""The scores of a session whose Ray task failed: ``unscored``, cause ``ray_task_failed``.

Why a module: when a task raises, or its worker or node dies, the sessions
it had not reported were never judged, and the rule (docs/scoring.md) is
that whatever could not be decided is ``unscored`` with its cause, never
``passed``. Each gating signal of the session's scenario is recorded
``unscored`` with the error, and both composites are ``unscored`` whatever
the scenario gates on (even nothing), with ``detail.causes`` =
``["ray_task_failed"]`` so the summary's ``unscored`` block counts them and
``vae rescore`` exits 1 unless ``--allow-unscored``.
"""

from __future__ import annotations

from typing import Any

from vae.recordings.models import ScoreRecord, SessionRecord, Verdict
from vae.recordings.scenarios.model import Scenario
from vae.scorer_service import signals
from vae.scorer_service.ledger.aggregate import SessionOutcome

#: The cause of every score of a session whose task failed (the prefix of ``error``).
TASK_FAILED = "ray_task_failed"


def failed_outcome(
    scoring_id: str, session: SessionRecord, scenario: Scenario, error: str
) -> SessionOutcome:
    """The session's scores when its task failed with ``error`` (what failed, and where)."""
    sid = session.session_id
    message = f"{TASK_FAILED}: {error}"
    reason = "the Ray task scoring this session failed: nothing was judged"
    gating = [str(s) for s in scenario.success_signals]
    records = [
        ScoreRecord(scoring_id, sid, name, Verdict.UNSCORED, None, {"reason": reason}, message)
        for name in gating
    ]
    for name, gated in (
        (signals.IS_SUCCESSFUL, gating),
        (signals.IS_TASK_SUCCESSFUL, [s for s in gating if s != signals.CLEAN_EXIT]),
    ):
        detail: dict[str, Any] = {
            "gating": gated,
            "decided": [],
            "failed": [],
            "unscored": gated,
            "causes": [TASK_FAILED],
            "not_applicable": [],
            "reason": reason,
        }
        records.append(ScoreRecord(scoring_id, sid, name, Verdict.UNSCORED, None, detail, message))
    return SessionOutcome(sid, session.scenario_name, scenario.domain, session.duration_s, records)
