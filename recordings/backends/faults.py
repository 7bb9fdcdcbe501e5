"""What the single writer does when storage fails (disk full, I/O error, ...).

SQLite reports a full disk, an I/O error, a read-only or vanished file as an
``OperationalError`` like any other; retrying those forever (as for a lock)
hangs every caller, and committing "row by row" around them only repeats
the failure per row. This module tells SQLite's apart (PostgreSQL's carry a
SQLSTATE code: :func:`vae.recordings.backends.pg.fault`; a stopped server, a broken
connection, a full disk there are storage failures too):

- **lock errors** are waited on and retried with backoff, but only up to the
  writer's lock timeout; then they count as a storage failure;
- **storage errors** (:func:`is_storage_error`) fail the writer at once:
  :class:`~vae.recordings.errors.StorageError`, one log line, every waiting
  ``flush`` raises it, the ``failed`` event is set so services can end
  sessions with ``storage_error``;
- anything else (a constraint on one row) is a **row error**: the rest of the
  batch is kept.

A database file deleted or replaced under the writer is detected by its inode
before each commit (SQLite would go on writing to the unlinked file).

After a failure, an attempt's row and small status updates (a session's
end, a run's or a scoring's final status) are kept and tried once more at close on a fresh
connection with a short timeout (:func:`salvage`) — "where the database
still accepts it" — so a full disk still shows ``storage_error`` and
``failed`` when space allows. A status that vouches for the rows before it
(a run ``completed``, a scoring ``complete``, a session ended for a
finished stop reason such as ``end_tool``) is never kept: those rows may be
what was lost, so the run, scoring or session stays ``running`` (never ended,
read as unfinished or interrupted) or gets the ``failed`` or
``storage_error`` its owner records next. Everything else
is dropped: its loss is the failure already reported.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vae.recordings.backends.locator import Locator, locate
from vae.recordings.stop_reasons import is_finished

log = logging.getLogger("vae.recordings.writer")

#: Statements worth retrying after a failure (an attempt's row, small status updates).
_SALVAGE = (
    "INSERT INTO sessions ",
    "UPDATE sessions SET status = 'ended'",
    "UPDATE runs SET status",
    "UPDATE scorings SET status",
)
#: Status updates whose first parameter is the new status.
_STATUS_UPDATES = ("UPDATE runs SET status = ?", "UPDATE scorings SET status = ?")
#: Statuses that say everything before them was recorded: never salvaged.
_SUCCESS = frozenset({"complete", "completed"})
#: A session's end, whose second parameter is its stop reason.
_SESSION_END = "UPDATE sessions SET status = 'ended', ended_ns = ?, stop_reason = ?"
_STORAGE_WORDS = (
    "disk is full",
    "disk i/o error",
    "readonly",
    "read-only",
    "unable to open",
    "no such table",
    "database disk image is malformed",
    "file is not a database",
)


def is_lock_error(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def is_storage_error(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return any(word in text for word in _STORAGE_WORDS)


def salvageable(sql: str, row: Sequence[Any]) -> bool:
    """True for a row worth trying again at close: never a success status (see above)."""
    if not sql.startswith(_SALVAGE):
        return False
    if sql.startswith(_STATUS_UPDATES):
        return not row or str(row[0]) not in _SUCCESS
    if sql.startswith(_SESSION_END):
        return len(row) < 2 or not is_finished(str(row[1]))
    return True


def file_identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def salvage(store: Path | Locator, statements: Sequence[tuple[str, tuple[Any, ...]]]) -> bool:
    """Try the kept status updates once on a fresh connection; True if committed."""
    if not statements:
        return False
    locator = locate(store)
    if locator.is_postgres:
        return _salvage_postgres(locator, statements)
    path = locator.file
    if not path.exists():
        return False
    try:
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=rw", uri=True, timeout=2.0)
    except sqlite3.Error:
        return False
    try:
        conn.execute("BEGIN IMMEDIATE")
        for sql, row in statements:
            with contextlib.suppress(sqlite3.IntegrityError):  # already there
                conn.execute(sql, row)
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        log.error("could not record the final statuses either (%s)", exc)
        return False
    finally:
        conn.close()
    log.warning("recorded %d final status updates after the storage failure", len(statements))
    return True


def _salvage_postgres(locator: Locator, statements: Sequence[tuple[str, tuple[Any, ...]]]) -> bool:
    from vae.recordings.backends import pg

    try:
        pg.commit_once(locator, statements, timeout_s=2.0)
    except Exception as exc:  # the server may be gone: report, never raise
        log.error("could not record the final statuses either (%s)", " ".join(str(exc).split()))
        return False
    log.warning("recorded %d final status updates after the storage failure", len(statements))
    return True
