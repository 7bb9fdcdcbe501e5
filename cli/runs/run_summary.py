"""The lines ``vae run`` prints after a run: what happened, in words.

Why a module: the summary must say what happened (a bot that never joined, a
connector that failed, a run the bridge could not finish, errors a bot
reported during a call), not only a table of stop reasons, and ``vae demo``
prints the same lines on Ctrl-C. Only formatting lives here; no gRPC calls.
Bot text is shown as received on a terminal: these are plain-text lines.
"""

from __future__ import annotations

from typing import Any

#: Columns of the per-session table (``stop_detail`` beside the stop reason).
COLUMNS = [
    "scenario",
    "attempt",
    "status",
    "stop_reason",
    "finished",
    "clean_exit",
    "user_turns",
    "agent_turns",
    "duration_s",
    "detail",
]


def detail_of(row: dict[str, Any]) -> str:
    """One cell that says why: the stop detail, else the retry reason."""
    return str(row.get("stop_detail") or row.get("retry_reason") or "")


def notes(run_id: str, status: str, error: str, rows: list[dict[str, Any]]) -> list[str]:
    """Lines under the table: the run's error, unfinished attempts, bot errors, how to resume."""
    out: list[str] = []
    if error:
        out.append(f"run {run_id} {status}: {error}")
    for row in rows:
        if row.get("status") == "superseded":
            continue
        label = f"{row['scenario']} attempt {row['attempt']}"
        if row.get("stop_reason") and not row.get("finished", True):
            out.append(f"{label}: unfinished ({row['stop_reason']}): {detail_of(row)}")
        for line in row.get("bot_errors", []):
            out.append(f"{label}: bot error: {line}")
    return out


def interrupted_line(run_id: str, how: str = "vae run") -> str:
    """What Ctrl-C prints: the run is cancelled, and the command that resumes it."""
    if not run_id:
        return "interrupted before the run started: nothing was recorded"
    return (
        f"interrupted: run {run_id} cancelled; its unfinished sessions run again with: "
        f"vae run --resume {run_id}" + (f" ({how})" if how != "vae run" else "")
    )
