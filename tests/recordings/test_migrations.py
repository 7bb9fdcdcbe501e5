"""Migrations: an empty file, a file at the previous version, a file from the future."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from recordings.connection import open_database, open_readonly
from recordings.errors import SchemaTooNewError
from recordings.migrations import MIGRATIONS, SCHEMA_VERSION, applied_migrations, migrate


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def test_empty_file_gets_every_migration(db_path: Path) -> None:
    conn = open_database(db_path)
    assert applied_migrations(conn) == [m.name for m in MIGRATIONS]
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert {"runs", "sessions", "audio_segments", "events", "final_states", "scorings",
            "scores", "judge_cache", "artifacts"} <= _tables(conn)  # fmt: skip
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_previous_version_is_upgraded_and_keeps_its_data(db_path: Path) -> None:
    conn = sqlite3.connect(db_path, isolation_level=None)
    # A file from before the artifacts migration (later migrations follow it).
    migrate(conn, target=[m.name for m in MIGRATIONS].index("0003_artifacts"))
    conn.execute(
        "INSERT INTO runs (run_id, created_ns, status, vae_version)"
        " VALUES ('old', 1, 'completed', '0')"
    )
    assert "artifacts" not in _tables(conn)
    conn.close()
    conn = open_database(db_path)
    assert applied_migrations(conn)[-1] == MIGRATIONS[-1].name
    assert conn.execute("SELECT run_id FROM runs").fetchall() == [("old",)]
    assert "artifacts" in _tables(conn)
    # 0004_run_error: an old run reads with no error.
    assert conn.execute("SELECT error FROM runs").fetchall() == [("",)]
    columns = [r[1] for r in conn.execute("PRAGMA table_info(runs)")]
    assert "replayed_from" in columns  # 0009_replayed_from
    # 0014_transcripts: a scoring's transcript layer and the transcription cache.
    assert {"transcripts", "transcription_cache"} <= _tables(conn)
    conn.close()


def test_newer_file_is_refused_untouched(db_path: Path) -> None:
    open_database(db_path).close()
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute(
        "INSERT INTO schema_migrations (id, name, applied_ns)"
        " VALUES (?, '9999_from_the_future', 0)",
        (SCHEMA_VERSION + 1,),
    )
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(SchemaTooNewError, match="newer than this vae"):
        open_database(db_path)
    with pytest.raises(SchemaTooNewError):
        open_readonly(db_path)
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
    conn.close()


def test_failed_migration_leaves_the_file_at_its_version(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recordings import migrations

    broken = (*MIGRATIONS[:1], migrations.Migration("0002_scoring", "CREATE TABLE runs (x)"))
    monkeypatch.setattr(migrations, "MIGRATIONS", broken)
    conn = sqlite3.connect(db_path, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError):
        migrations.migrate(conn, target=2)
    assert applied_migrations(conn) == ["0001_recordings"]
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    conn.close()
