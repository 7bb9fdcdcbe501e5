"""The verdicts the established framework recorded, kept as a scoring of their own.

``metrics.json`` holds the framework's own verdicts for a scenario. The
importer stores them as one scoring (``config.source = "import:nemo"``) so the
score history of an imported run starts with what the old tool said, and a
``vae rescore`` can be compared against it signal by signal. Stored values
follow the framework: booleans, ``"N/A"`` for not applicable, pass *rates*
for the assertion signals (a rate of 1.0 passes, as its composite required).
"""

from __future__ import annotations

from typing import Any

from vae.recordings.models import ScoreRecord, Verdict

#: metrics.json key -> (vae signal name, key holding a numeric value or None).
_SIGNALS: dict[str, tuple[str, str | None]] = {
    "is_action_match": ("ACTION_MATCH", None),
    "db_state_match": ("DB_STATE_MATCH", None),
    "db_state_assertion_pass_rate": ("DB_STATE_ASSERTION", "db_state_assertion_pass_rate"),
    "nl_assertion_pass_rate": ("NL_ASSERTION", "nl_assertion_pass_rate"),
    "judge_passed": ("JUDGE_PASSED", "judge_score"),
    "clean_exit": ("CLEAN_EXIT", None),
    "is_successful": ("is_successful", None),
    "is_task_successful": ("is_task_successful", None),
}
_DETAIL_KEYS = {
    "DB_STATE_MATCH": ("db_state_expected_hash", "db_state_actual_hash"),
    "DB_STATE_ASSERTION": ("db_state_assertion_verdicts",),
    "CLEAN_EXIT": ("stop_reason",),
    "is_successful": ("success_breakdown", "insufficient_agent_turns"),
}


def verdict_of(value: Any) -> Verdict | None:
    if isinstance(value, bool):
        return Verdict.PASSED if value else Verdict.FAILED
    if isinstance(value, int | float):
        return Verdict.PASSED if float(value) >= 1.0 else Verdict.FAILED
    if value == "N/A":
        return Verdict.NOT_APPLICABLE
    return None


def original_scores(scoring_id: str, session_id: str, metrics: dict[str, Any]) -> list[ScoreRecord]:
    """One score per signal the framework recorded for this session."""
    out: list[ScoreRecord] = []
    for key, (signal, value_key) in _SIGNALS.items():
        verdict = verdict_of(metrics.get(key))
        if verdict is None:
            continue
        raw_value = metrics.get(value_key) if value_key else None
        value = float(raw_value) if isinstance(raw_value, int | float) else None
        detail: dict[str, Any] = {"source": "import:nemo", "recorded": metrics.get(key)}
        for extra in _DETAIL_KEYS.get(signal, ()):
            if extra in metrics:
                detail[extra] = metrics[extra]
        out.append(ScoreRecord(scoring_id, session_id, signal, verdict, value, detail))
    return out


def summary_of(scores: list[ScoreRecord]) -> dict[str, Any]:
    """Counts and rates per composite and signal, in the scorer's summary shape.

    Rates are passed / (passed + failed); not-applicable verdicts are counted
    beside the rate, never in it. Only what the framework recorded is
    summarised: latency, tokens and per-domain blocks stay empty.
    """

    def counts(signal: str) -> dict[str, Any]:
        found = [s.verdict for s in scores if s.signal == signal]
        c: dict[str, Any] = {v.value: sum(1 for x in found if x is v) for v in Verdict}
        decided = c["passed"] + c["failed"]
        c["rate"] = c["passed"] / decided if decided else None
        return c

    judge = [s.value for s in scores if s.signal == "JUDGE_PASSED" and s.value is not None]
    summary: dict[str, Any] = {
        "source": "import:nemo",
        "sessions": len({s.session_id for s in scores}),
        "is_successful": counts("is_successful"),
        "is_task_successful": counts("is_task_successful"),
        "signals": {name: counts(name) for name, _ in _SIGNALS.values() if name.isupper()},
        "judge_mean": sum(judge) / len(judge) if judge else None,
        "stalled": [],
        "latency": {},
        "tokens": {},
        "pass_hat_k": {},
        "domains": {},
    }
    summary["success_rate"] = summary["is_successful"]["rate"]
    summary["task_success_rate"] = summary["is_task_successful"]["rate"]
    return summary
