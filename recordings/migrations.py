"""Named, ordered schema migrations.

Each migration runs in one transaction together with the row that records it,
so a file is always at a known version. ``PRAGMA user_version`` mirrors the
number of applied migrations; a file with a migration we do not know was
written by a newer vae and is refused untouched.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from recordings.errors import SchemaError, SchemaTooNewError


@dataclass(frozen=True)
class Migration:
    name: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "0001_recordings",
        """
        CREATE TABLE runs (
          run_id TEXT PRIMARY KEY,
          created_ns INTEGER NOT NULL,
          finished_ns INTEGER,
          status TEXT NOT NULL,
          options_json TEXT NOT NULL DEFAULT '{}',
          vae_version TEXT NOT NULL,
          tags_json TEXT NOT NULL DEFAULT '[]',
          source TEXT NOT NULL DEFAULT 'bridge'
        );
        CREATE TABLE run_scenarios (
          run_id TEXT NOT NULL REFERENCES runs(run_id),
          scenario_name TEXT NOT NULL,
          ordinal INTEGER NOT NULL,
          domain TEXT NOT NULL DEFAULT '',
          scenario_json TEXT NOT NULL,
          PRIMARY KEY (run_id, scenario_name)
        );
        CREATE TABLE sessions (
          session_id TEXT PRIMARY KEY,
          run_id TEXT NOT NULL REFERENCES runs(run_id),
          scenario_name TEXT NOT NULL,
          attempt INTEGER NOT NULL,
          status TEXT NOT NULL,
          started_ns INTEGER NOT NULL,
          ended_ns INTEGER,
          stop_reason TEXT,
          stop_detail TEXT NOT NULL DEFAULT '',
          clean_exit INTEGER,
          user_turns INTEGER NOT NULL DEFAULT 0,
          agent_turns INTEGER NOT NULL DEFAULT 0,
          user_bot_json TEXT NOT NULL DEFAULT '{}',
          agent_bot_json TEXT NOT NULL DEFAULT '{}',
          audio_json TEXT NOT NULL DEFAULT '{}',
          retry_reason TEXT NOT NULL DEFAULT '',
          superseded_reason TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX sessions_by_run ON sessions(run_id, scenario_name, attempt);
        CREATE TABLE audio_segments (
          session_id TEXT NOT NULL REFERENCES sessions(session_id),
          channel TEXT NOT NULL,
          seq INTEGER NOT NULL,
          start_offset INTEGER NOT NULL,
          sample_count INTEGER NOT NULL,
          sample_rate INTEGER NOT NULL,
          first_arrival_ns INTEGER NOT NULL,
          frames BLOB NOT NULL,
          pcm BLOB NOT NULL,
          PRIMARY KEY (session_id, channel, seq)
        );
        CREATE TABLE events (
          id INTEGER PRIMARY KEY,
          session_id TEXT NOT NULL REFERENCES sessions(session_id),
          side TEXT NOT NULL,
          kind TEXT NOT NULL,
          bridge_ns INTEGER NOT NULL,
          bot_ns INTEGER NOT NULL DEFAULT 0,
          payload_json TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX events_by_session ON events(session_id, bridge_ns);
        CREATE TABLE final_states (
          session_id TEXT NOT NULL REFERENCES sessions(session_id),
          side TEXT NOT NULL,
          received_ns INTEGER NOT NULL,
          state_json TEXT,
          state_hash TEXT,
          context_json TEXT,
          PRIMARY KEY (session_id, side)
        );
        """,
    ),
    Migration(
        "0002_scoring",
        """
        CREATE TABLE scorings (
          scoring_id TEXT PRIMARY KEY,
          run_id TEXT NOT NULL REFERENCES runs(run_id),
          created_ns INTEGER NOT NULL,
          finished_ns INTEGER,
          status TEXT NOT NULL,
          mode TEXT NOT NULL DEFAULT 'append',
          config_json TEXT NOT NULL,
          versions_json TEXT NOT NULL DEFAULT '{}',
          judge_model TEXT NOT NULL DEFAULT '',
          prompt_hash TEXT NOT NULL DEFAULT '',
          superseded_by TEXT,
          summary_json TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX scorings_by_run ON scorings(run_id, created_ns);
        CREATE TABLE scores (
          scoring_id TEXT NOT NULL REFERENCES scorings(scoring_id),
          session_id TEXT NOT NULL REFERENCES sessions(session_id),
          signal TEXT NOT NULL,
          verdict TEXT NOT NULL,
          value REAL,
          passed INTEGER,
          detail_json TEXT NOT NULL DEFAULT '{}',
          error TEXT NOT NULL DEFAULT '',
          PRIMARY KEY (scoring_id, session_id, signal)
        );
        CREATE TABLE judge_cache (
          cache_key TEXT PRIMARY KEY,
          model TEXT NOT NULL,
          request_json TEXT NOT NULL,
          response_json TEXT NOT NULL,
          created_ns INTEGER NOT NULL
        );
        """,
    ),
    Migration(
        "0003_artifacts",
        """
        CREATE TABLE artifacts (
          id INTEGER PRIMARY KEY,
          run_id TEXT NOT NULL REFERENCES runs(run_id),
          session_id TEXT REFERENCES sessions(session_id),
          name TEXT NOT NULL,
          content TEXT NOT NULL
        );
        CREATE INDEX artifacts_by_run ON artifacts(run_id, session_id);
        """,
    ),
    Migration(
        "0004_run_error",
        # Why a run failed (an exception while running it, a shutdown, scenarios
        # left unfinished): shown by `vae run`, WatchRun and `vae runs show`.
        """
        ALTER TABLE runs ADD COLUMN error TEXT NOT NULL DEFAULT ''
        """,
    ),
    Migration(
        "0007_session_clock",
        """
        ALTER TABLE sessions ADD COLUMN clock_json TEXT;
        """,
    ),
    Migration(
        "0009_replayed_from",
        """
        ALTER TABLE runs ADD COLUMN replayed_from TEXT;
        ALTER TABLE sessions ADD COLUMN replayed_from TEXT;
        """,
    ),
    Migration(
        "0011_session_bridge",
        # Which bridge process served each attempt (host, pid, address, worker):
        # a JSON object, shown by `vae runs show` and GetRun.
        """
        ALTER TABLE sessions ADD COLUMN bridge_json TEXT
        """,
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_migrations'"
    ).fetchone()
    if not exists:
        return []
    return [row[0] for row in conn.execute("SELECT name FROM schema_migrations ORDER BY id")]


def check_version(conn: sqlite3.Connection) -> int:
    """Return the file's version; raise SchemaTooNewError for a newer file."""
    applied = applied_migrations(conn)
    known = [m.name for m in MIGRATIONS]
    user_version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    unknown = [name for name in applied if name not in known]
    if unknown or user_version > SCHEMA_VERSION:
        raise SchemaTooNewError(
            f"this database is at schema version {max(user_version, len(applied))} "
            f"(migrations {', '.join(unknown) or 'unknown'}), newer than this vae "
            f"understands ({SCHEMA_VERSION}); upgrade vae to read it"
        )
    if applied != known[: len(applied)]:
        raise SchemaError(f"migrations applied out of order: {applied}")
    return len(applied)


def migrate(conn: sqlite3.Connection, *, target: int = SCHEMA_VERSION) -> list[str]:
    """Apply every pending migration up to ``target``; return the names applied.

    ``conn`` must be in autocommit mode (``isolation_level=None``) so each
    migration gets exactly one explicit transaction.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_ns INTEGER NOT NULL)"
    )
    done = check_version(conn)
    applied: list[str] = []
    for index, migration in enumerate(MIGRATIONS[done:target], start=done + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-check inside the write lock: another process may have migrated.
            if migration.name in applied_migrations(conn):
                conn.execute("COMMIT")
                continue
            for statement in _statements(migration.sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (id, name, applied_ns) VALUES (?, ?, ?)",
                (index, migration.name, time.time_ns()),
            )
            conn.execute(f"PRAGMA user_version = {index}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(migration.name)
    return applied


def _statements(sql: str) -> list[str]:
    return [s.strip() for s in sql.split(";") if s.strip()]
