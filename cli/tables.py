"""Plain-text tables for the terminal (no dependencies, so any command can use them)."""

from __future__ import annotations

from typing import Any


def table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    if not rows:
        return "(no sessions)"
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in columns}
    lines = ["  ".join(c.ljust(widths[c]) for c in columns)]
    lines += ["  ".join(str(r[c]).ljust(widths[c]) for c in columns) for r in rows]
    return "\n".join(lines)


COLUMNS = [
    "scenario",
    "attempt",
    "status",
    "stop_reason",
    "clean_exit",
    "user_turns",
    "agent_turns",
    "duration_s",
    "retry_reason",
]
