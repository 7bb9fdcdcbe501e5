"""Migrations on both back ends: an empty store, the previous version, a store from
the future, a failed migration, another program's database, and several processes
opening one store at once."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from vae.recordings.backends.connection import open_store, open_store_readonly
from vae.recordings.backends.db_file import DatabaseFileError, DatabaseMissingError
from vae.recordings.backends.dialect import StoreConnection
from vae.recordings.backends.locator import Locator
from vae.recordings.backends.migrations import (
    MIGRATIONS,
    SCHEMA_VERSION,
    applied_migrations,
    has_table,
    migrate,
)
from vae.recordings.errors import SchemaTooNewError

ROOT = Path(__file__).resolve().parents[3]
TABLES = ("runs", "sessions", "audio_segments", "events", "final_states", "scorings", "scores",
          "judge_cache", "artifacts")  # fmt: skip


def raw(store: Locator) -> StoreConnection:
    """A plain autocommit connection that does no checks and no migrations."""
    if store.is_postgres:
        from vae.recordings.backends import pg

        return pg.connect(store)
    return sqlite3.connect(store.file, isolation_level=None)


def _rows(store: Locator, sql: str) -> list[tuple[Any, ...]]:
    conn = raw(store)
    try:
        return [tuple(r) for r in conn.execute(sql).fetchall()]
    finally:
        conn.close()


def test_empty_store_gets_every_migration(store: Locator) -> None:
    conn = open_store(store)
    assert applied_migrations(conn) == [m.name for m in MIGRATIONS]
    assert all(has_table(conn, t) for t in TABLES)
    if not store.is_postgres:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_previous_version_is_upgraded_and_keeps_its_data(store: Locator) -> None:
    conn = raw(store)
    # A store from before the artifacts migration (later migrations follow it).
    migrate(conn, target=[m.name for m in MIGRATIONS].index("0003_artifacts"))
    conn.execute(
        "INSERT INTO runs (run_id, created_ns, status, vae_version)"
        " VALUES ('old', 1, 'completed', '0')"
    )
    assert not has_table(conn, "artifacts")
    conn.close()
    conn = open_store(store)
    assert applied_migrations(conn)[-1] == MIGRATIONS[-1].name
    assert conn.execute("SELECT run_id FROM runs").fetchall() == [("old",)]
    assert has_table(conn, "artifacts")
    # 0004_run_error: an old run reads with no error; 0009_replayed_from: a new column.
    assert [tuple(r) for r in conn.execute("SELECT error, replayed_from FROM runs")] == [("", None)]
    # 0014_transcripts: a scoring's transcript layer and the transcription cache.
    assert has_table(conn, "transcripts") and has_table(conn, "transcription_cache")
    conn.close()


def test_newer_store_is_refused_untouched(store: Locator) -> None:
    open_store(store).close()
    conn = raw(store)
    conn.execute(
        "INSERT INTO schema_migrations (id, name, applied_ns)"
        " VALUES (?, '9999_from_the_future', 0)",
        (SCHEMA_VERSION + 1,),
    )
    if not store.is_postgres:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = _rows(store, "SELECT id, name, applied_ns FROM schema_migrations ORDER BY id")
    with pytest.raises(SchemaTooNewError, match="newer than this vae"):
        open_store(store)
    with pytest.raises(SchemaTooNewError):
        open_store_readonly(store)
    assert _rows(store, "SELECT id, name, applied_ns FROM schema_migrations ORDER BY id") == before
    if not store.is_postgres:
        assert _rows(store, "PRAGMA user_version") == [(SCHEMA_VERSION + 1,)]


def test_failed_migration_leaves_the_store_at_its_version(
    store: Locator, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vae.recordings.backends import migrations

    broken = (*MIGRATIONS[:1], migrations.Migration("0002_scoring", "CREATE TABLE runs (x TEXT)"))
    monkeypatch.setattr(migrations, "MIGRATIONS", broken)
    conn = raw(store)
    with pytest.raises(Exception, match=r"(?i)already exists"):
        migrations.migrate(conn, target=2)
    assert applied_migrations(conn) == ["0001_recordings"]
    if not store.is_postgres:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    conn.close()


def test_a_database_of_another_program_is_refused_untouched(store: Locator) -> None:
    conn = raw(store)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.close()
    for opener in (open_store, open_store_readonly):
        with pytest.raises(DatabaseFileError, match="another program"):
            opener(store)
    conn = raw(store)
    assert not has_table(conn, "schema_migrations") and not has_table(conn, "runs")
    conn.close()


def test_a_reader_never_creates_a_store(store: Locator) -> None:
    with pytest.raises(DatabaseMissingError, match="no vae database"):
        open_store_readonly(store)
    with pytest.raises(DatabaseMissingError):
        open_store(store, create=False)
    if store.is_postgres:
        assert _rows(store, "SELECT count(*) FROM information_schema.tables"
                            " WHERE table_schema = current_schema()") == [(0,)]  # fmt: skip
    else:
        assert not store.file.exists()


OPEN = """
import sys
from vae.recordings.backends.connection import open_store
open_store(sys.argv[1]).close()
"""


def test_processes_opening_one_store_at_once_migrate_it_once(store: Locator) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen([sys.executable, "-c", OPEN, str(store)], cwd=ROOT, env=env,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]  # fmt: skip
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    names = _rows(store, "SELECT name FROM schema_migrations ORDER BY id")
    assert [n for (n,) in names] == [m.name for m in MIGRATIONS]
