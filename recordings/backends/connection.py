"""Opening a store file: checks, pragmas, migrations, version checks.

Order matters: the file is inspected (:mod:`vae.recordings.backends.db_file`) and its
schema version read *before* any pragma that writes (``journal_mode = WAL``
rewrites the header), so a file written by a newer vae, or one that is not a
vae database at all, is refused untouched. Readers open with ``mode=rw``
(never creating a file) and ``query_only``; where the file or its folder is
read-only (SQLite could not create the ``-shm`` file WAL readers need) they
open the file as immutable, which is safe because nobody can be writing it. Every SQLite error while
opening becomes a :class:`~vae.recordings.backends.db_file.DatabaseFileError` naming the file.

A ``postgresql://`` locator is opened by :mod:`vae.recordings.backends.pg_open` instead,
with the same promises (imported only then: psycopg is an optional extra).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vae.recordings.backends.db_file import (
    DatabaseFileError,
    describe_sqlite_error,
    inspect,
    mark_checked,
    writable_file,
    writable_folder,
)
from vae.recordings.backends.dialect import StoreConnection
from vae.recordings.backends.locator import StoreRef, locate
from vae.recordings.backends.migrations import SCHEMA_VERSION, check_version, migrate, other_tables

#: How long a connection waits on another process's lock before SQLite says busy.
BUSY_TIMEOUT_MS = 30_000


def configure(conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")


def _vae_version(conn: sqlite3.Connection, path: Path) -> int:
    """The file's schema version; refuse an SQLite file of some other program."""
    version = check_version(conn)
    # Only schema_migrations and nothing recorded: another vae is creating this file
    # right now (its first migration not yet committed), not another program's file.
    if version == 0 and other_tables(conn):
        raise DatabaseFileError(f"{path} is an SQLite database of another program, not vae's")
    return version


def open_store(db: StoreRef, *, create: bool = True) -> StoreConnection:
    """Open (and migrate) a store for writing: an SQLite file or a PostgreSQL database."""
    locator = locate(db)
    if locator.is_postgres:
        from vae.recordings.backends import pg_open

        return pg_open.open_database(locator, create=create)
    return open_database(locator.file, create=create)


def open_store_readonly(db: StoreRef) -> StoreConnection:
    """Open a store for reading while a writer may be writing."""
    locator = locate(db)
    if locator.is_postgres:
        from vae.recordings.backends import pg_open

        return pg_open.open_readonly(locator)
    return open_readonly(locator.file)


def open_database(path: str | Path, *, create: bool = True) -> sqlite3.Connection:
    """Open (and migrate) a store file for writing; autocommit mode."""
    path = Path(path)
    has_data = inspect(path, for_write=create)
    if create and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    if not writable_folder(path):
        raise DatabaseFileError(
            f"{path} is in a read-only folder; vae needs to write there (WAL files)"
        )
    if path.exists() and not writable_file(path):
        raise DatabaseFileError(f"{path} is read-only; vae needs to write to it here")
    try:
        if has_data:
            # Refuse a newer file before anything writes to it.
            probe = sqlite3.connect(path.resolve().as_uri() + "?mode=rw", uri=True)
            try:
                probe.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                _vae_version(probe, path)
            finally:
                probe.close()
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise describe_sqlite_error(path, exc) from exc
    try:
        configure(conn)
        migrate(conn)
    except sqlite3.Error as exc:
        conn.close()
        raise describe_sqlite_error(path, exc) from exc
    except BaseException:
        conn.close()
        raise
    mark_checked(path)
    return conn


def open_readonly(path: str | Path) -> sqlite3.Connection:
    """Open a store file for reading while a writer may be writing (WAL)."""
    path = Path(path)
    inspect(path, for_write=False)
    # mode=rw never creates a file; query_only below keeps the connection a reader.
    writable = writable_folder(path) and writable_file(path)
    flags = "?mode=rw" if writable else "?immutable=1"
    try:
        conn = sqlite3.connect(
            path.resolve().as_uri() + flags,
            uri=True,
            isolation_level=None,
            check_same_thread=False,
        )
    except sqlite3.Error as exc:
        raise describe_sqlite_error(path, exc) from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if _vae_version(conn, path) < SCHEMA_VERSION:
            # An older file: bring it up to date once, then read.
            open_database(path, create=False).close()
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:
        conn.close()
        raise describe_sqlite_error(path, exc) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def commit_once(db: StoreRef, statements: list[tuple[str, tuple[object, ...]]]) -> None:
    """Commit ``statements`` in one transaction on a short-lived connection of its own.

    For another process that writes beside the store's single writer (the
    bridge's final-state worker); the database arbitrates between the two.
    """
    locator = locate(db)
    if locator.is_postgres:
        from vae.recordings.backends import pg

        pg.commit_once(locator, statements, timeout_s=BUSY_TIMEOUT_MS / 1000)
        return
    conn = sqlite3.connect(locator.file, isolation_level=None)
    try:
        configure(conn)
        conn.execute("BEGIN IMMEDIATE")
        for sql, row in statements:
            conn.execute(sql, row)
        conn.execute("COMMIT")
    finally:
        conn.close()
