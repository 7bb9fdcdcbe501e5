"""Where a replayed run came from: ``replayed_from`` on runs and sessions.

A replay (``vae run --replay RUN``) plays the user side of a recorded run to a
new agent. The new run records its source run, and each of its sessions the
source session whose caller it replayed (migration ``0009_replayed_from``), so
``vae runs show``, the report and a comparison can point back at the original.

Kept apart from the reader and writer so the columns stay optional: a run that
is not a replay simply has none.
"""

from __future__ import annotations

from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.writer import RecordingWriter


async def link_run(writer: RecordingWriter, run_id: str, source_run_id: str) -> None:
    await writer.execute(
        "UPDATE runs SET replayed_from = ? WHERE run_id = ?", (source_run_id, run_id)
    )


async def link_session(writer: RecordingWriter, session_id: str, source_session_id: str) -> None:
    """Record the source session (queued after the session's own row, so it applies)."""
    await writer.execute(
        "UPDATE sessions SET replayed_from = ? WHERE session_id = ?",
        (source_session_id, session_id),
    )


def run_source(reader: RecordingReader, run_id: str) -> str | None:
    """The run ``run_id`` replayed, or None."""
    row = reader.conn.execute(
        "SELECT replayed_from FROM runs WHERE run_id = ?", (run_id,)
    ).fetchone()
    return None if row is None or not row[0] else str(row[0])


def session_sources(reader: RecordingReader, run_id: str) -> dict[str, str]:
    """Session id -> the source session it replayed, for the replayed sessions of a run."""
    rows = reader.conn.execute(
        "SELECT session_id, replayed_from FROM sessions"
        " WHERE run_id = ? AND replayed_from IS NOT NULL",
        (run_id,),
    )
    return {str(r[0]): str(r[1]) for r in rows}
