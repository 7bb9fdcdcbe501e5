"""Opening a PostgreSQL store: version checks, migrations, refusals.

The same promises as an SQLite file (:mod:`vae.recordings.backends.connection`), kept on a
server shared by several processes, perhaps on several machines:

- a database written by a newer vae is refused before anything is written;
- a database holding tables of another program (and no vae schema) is
  refused untouched — give vae its own database, or its own schema with
  ``?options=-csearch_path%3Dvae`` in the URL;
- two processes opening the database at once (two bridges starting) migrate
  it once: the check and every migration run under one advisory lock
  (:data:`~vae.recordings.backends.migrations.MIGRATION_LOCK`), each migration in its
  own transaction with its record;
- a reader never creates a schema: a database with no vae schema yet is
  "no vae database" (as a missing SQLite file is), and an older schema is
  brought up to date once, then read.
"""

from __future__ import annotations

import contextlib

from vae.recordings.backends.db_file import DatabaseFileError, DatabaseMissingError
from vae.recordings.backends.locator import Locator
from vae.recordings.backends.migrations import (
    MIGRATION_LOCK,
    SCHEMA_VERSION,
    check_version,
    migrate,
    other_tables,
)
from vae.recordings.backends.pg import PgConnection, connect

#: How long opening waits for another process's migration (the advisory lock).
MIGRATION_WAIT_S = 120


def _refuse_other_program(conn: PgConnection, version: int) -> None:
    if version == 0 and other_tables(conn):
        raise DatabaseFileError(
            f"{conn.locator.display()} holds tables of another program, not vae's; give vae "
            "its own database (or its own schema: ?options=-csearch_path%3Dvae)"
        )


def open_database(locator: Locator, *, create: bool = True) -> PgConnection:
    """Connect and migrate (under the advisory lock); autocommit mode."""
    conn = connect(locator)
    try:
        conn.raw.execute(f"SET lock_timeout = '{MIGRATION_WAIT_S}s'")
        # Refuse a newer schema before taking any lock or writing anything.
        version = check_version(conn)
        if not create and version == 0:
            _refuse_other_program(conn, version)
            raise DatabaseMissingError(f"no vae database at {locator.display()} (no vae schema)")
        if version < SCHEMA_VERSION:
            conn.execute("SELECT pg_advisory_lock(?)", (MIGRATION_LOCK,))
            try:
                # Another program's tables are told from another process's half-done
                # migration only under the lock: read before it, "no version yet"
                # beside "some tables" is what a first migration in progress looks like.
                _refuse_other_program(conn, check_version(conn))
                migrate(conn)
            finally:
                with contextlib.suppress(Exception):
                    conn.execute("SELECT pg_advisory_unlock(?)", (MIGRATION_LOCK,))
        conn.raw.execute("SET lock_timeout = 0")
    except BaseException:
        conn.close()
        raise
    return conn


def open_readonly(locator: Locator) -> PgConnection:
    """A read-only connection; the schema checked (and brought up to date once)."""
    conn = connect(locator, readonly=True)
    try:
        version = check_version(conn)
        _refuse_other_program(conn, version)
        if version == 0:
            raise DatabaseMissingError(
                f"no vae database at {locator.display()} (the database holds no vae schema yet)"
            )
        if version < SCHEMA_VERSION:
            open_database(locator, create=False).close()
    except BaseException:
        conn.close()
        raise
    return conn
