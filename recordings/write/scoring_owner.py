"""Which process owns a scoring still ``running``, and marking dead owners' scorings.

Why: a rescore killed mid-way (SIGKILL, a crash, a power cut) leaves its
scoring ``running`` forever, and a reader cannot tell it from one in
progress. A scoring now records its owner when it starts — host name, process
id and the process's start time (Linux ``/proc/<pid>/stat`` field 22, so a
recycled pid is not mistaken for the owner). When the store is next opened
for writing, every ``running`` scoring whose owner is on this host and no
longer alive is marked ``interrupted``; readers show it as ``interrupted``
even before that. A scoring whose owner is on another host (a shared file)
or was written without an owner is left as it is: we cannot know, so we do
not guess.
"""

from __future__ import annotations

import json
import os
import socket
from typing import Any

from vae.recordings.backends.dialect import StoreConnection

INTERRUPTED = "interrupted"


def _start_ticks(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:
        return ""
    # The command name (field 2) may hold spaces or parentheses: split after the last ')'.
    rest = text.rsplit(")", 1)[-1].split()
    return rest[19] if len(rest) > 19 else ""


def owner_stamp() -> dict[str, Any]:
    """This process, as recorded in a new scoring's summary under ``owner``."""
    pid = os.getpid()
    return {"host": socket.gethostname(), "pid": pid, "start": _start_ticks(pid)}


def owner_alive(owner: object) -> bool | None:
    """True/False when the owner is on this host and we can tell; None when we cannot."""
    if not isinstance(owner, dict) or owner.get("host") != socket.gethostname():
        return None
    pid = owner.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by another user
    # A recorded start time that differs: the pid was recycled by another process.
    start = owner.get("start")
    return not (start and _start_ticks(pid) not in ("", start))


def is_interrupted(status: str, summary: object) -> bool:
    if status != "running" or not isinstance(summary, dict):
        return False
    return owner_alive(summary.get("owner")) is False


def mark_interrupted(conn: StoreConnection) -> list[str]:
    """Mark ``running`` scorings of dead owners ``interrupted``; return their ids."""
    rows = conn.execute(
        "SELECT scoring_id, summary_json FROM scorings WHERE status = 'running'"
    ).fetchall()
    marked: list[str] = []
    for scoring_id, text in rows:
        try:
            summary = json.loads(text or "{}")
        except json.JSONDecodeError:
            continue
        if not is_interrupted("running", summary):
            continue
        owner = summary.get("owner", {})
        summary["error"] = (
            f"interrupted: process {owner.get('pid')} on {owner.get('host')} ended before "
            "the scoring finished"
        )
        conn.execute(
            "UPDATE scorings SET status = ?, summary_json = ? WHERE scoring_id = ?"
            " AND status = 'running'",
            (INTERRUPTED, json.dumps(summary), scoring_id),
        )
        marked.append(scoring_id)
    return marked
