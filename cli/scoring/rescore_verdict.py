"""``vae rescore``'s verdict on its own scoring: the exit code and the lines that say why.

Why separate: the rescore's table output is reworked elsewhere; the rule
"exit 1 when any gating signal is unscored, unless --allow-unscored" and its
one-line summary must stay put whatever the table looks like.
"""

from __future__ import annotations

from typing import Any

from vae.scorer_service.ledger.unscored import unscored_line


def unscored_exit(summary: dict[str, Any], allow_unscored: bool) -> tuple[int, str]:
    """(exit code, line for stderr) for a finished scoring; (0, "") when all was decided."""
    line = unscored_line(summary)
    if not line:
        return 0, ""
    if allow_unscored:
        return 0, f"{line} (accepted: --allow-unscored)"
    return 1, f"{line}; exit 1 (--allow-unscored accepts this)"


def judge_unusable_line(error: str) -> str:
    return f"error: {error}"


def subset_line(scoring: Any) -> str:
    """A note for stderr when the scoring covers a subset and did not become current."""
    scope = scoring.summary.get("scope")
    if not isinstance(scope, dict) or not scope.get("subset"):
        return ""
    what = []
    if scope.get("sessions"):
        what.append(f"{len(scope['sessions'])} chosen session(s)")
    if scope.get("scorers_left_out"):
        what.append("without " + ", ".join(str(s) for s in scope["scorers_left_out"]))
    limited = "; ".join(what) or "a subset"
    if scope.get("current"):
        return f"note: this subset scoring ({limited}) is now the run's current one"
    return (
        f"note: this scoring covers a subset ({limited}): the run keeps its complete scoring as "
        "the current one (what vae report shows); --make-current makes this one current"
    )
