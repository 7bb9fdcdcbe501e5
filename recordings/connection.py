"""Opening a store file: pragmas, migrations, version checks."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from recordings.migrations import SCHEMA_VERSION, check_version, migrate

#: How long a connection waits on another process's lock before SQLite says busy.
BUSY_TIMEOUT_MS = 30_000


def configure(conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")


def open_database(path: str | Path, *, create: bool = True) -> sqlite3.Connection:
    """Open (and migrate) a store file for writing; autocommit mode."""
    path = Path(path)
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.exists():
        raise FileNotFoundError(f"no vae database at {path}")
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        configure(conn)
        migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def open_readonly(path: str | Path) -> sqlite3.Connection:
    """Open a store file for reading while a writer may be writing (WAL)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no vae database at {path}")
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    try:
        if check_version(conn) < SCHEMA_VERSION:
            # An older file: bring it up to date once, then read.
            open_database(path, create=False).close()
    except BaseException:
        conn.close()
        raise
    conn.execute("PRAGMA query_only = ON")
    return conn
