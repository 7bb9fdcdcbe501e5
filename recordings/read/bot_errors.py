"""Errors the bots reported during a call, as one list of lines per session.

Why here: a bot that fails quietly (a script it cannot run, a tool effect it
does not know) leaves only a Log event at error level in the database. The
run summary (bridge), the rescore output and the report (scorer) must all
show it beside the session, and they never import each other, so the
reading lives once in the store layer.

Collected, oldest first, each prefixed with the side: Log events at level
``error``; ``session_error`` events (input the bridge refused, a bot's stream
that broke). Lines are capped in count and length: a bot that floods errors
cannot flood a summary. The text stays raw; every renderer escapes it.
"""

from __future__ import annotations

from vae.recordings.models import EventKind
from vae.recordings.read.reader import RecordingReader

#: Most lines kept per session; more are summarised as "... N more".
MAX_LINES = 20
#: Longest line kept, characters.
MAX_CHARS = 300

_ERROR_LEVELS = frozenset({"error", "critical", "fatal"})


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


def bot_errors(reader: RecordingReader, session_id: str) -> list[str]:
    """The session's bot errors as ``"<side>: <message>"`` lines (at most :data:`MAX_LINES`)."""
    lines: list[str] = []
    kinds = (EventKind.LOG, EventKind.SESSION_ERROR)
    for event in reader.events(session_id, kinds):
        payload = event.payload if isinstance(event.payload, dict) else {}
        if event.kind is EventKind.LOG:
            if str(payload.get("level", "")).lower() not in _ERROR_LEVELS:
                continue
            message = str(payload.get("message", ""))
        else:
            message = str(payload.get("error", "")) or str(payload)
        lines.append(f"{event.side}: {_clip(message)}")
    if len(lines) > MAX_LINES:
        extra = len(lines) - MAX_LINES
        lines = [*lines[:MAX_LINES], f"... {extra} more"]
    return lines
