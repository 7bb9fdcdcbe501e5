"""Applying the store's named, ordered schema migrations, and checking a store's version.

The migrations themselves — each a name and its SQL — are a table of data
(:mod:`vae.recordings.backends.migration_table`); this module is what runs
them, and changes with how a store is checked and migrated, not with the
schema. Each migration runs in one transaction together with the row that
records it, so a database is always at a known version. On SQLite ``PRAGMA user_version``
mirrors the number of applied migrations; a database with a migration we do
not know was written by a newer vae and is refused untouched.

The same migrations run on SQLite and PostgreSQL: their DDL is the portable
subset (:mod:`vae.recordings.backends.dialect` maps the types for PostgreSQL, whose DDL is
transactional too). What differs is behind small hooks here: how a table's
existence is asked, the SQLite-only ``user_version`` mirror, and how two
processes are kept from migrating at once — SQLite's ``BEGIN IMMEDIATE``
write lock, PostgreSQL's advisory lock (:data:`MIGRATION_LOCK`) held around
the whole check-and-migrate.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from vae.recordings.backends.dialect import StoreConnection, dialect_of
from vae.recordings.backends.migration_table import NAMED_MIGRATIONS
from vae.recordings.errors import SchemaError, SchemaTooNewError

#: PostgreSQL advisory lock key held while checking and migrating ("vae-mig").
MIGRATION_LOCK = 0x7661652D6D6967


@dataclass(frozen=True)
class Migration:
    """One entry of the table: its name (recorded once applied) and its statements."""

    name: str
    sql: str


#: Every migration, in the order they are applied.
MIGRATIONS: tuple[Migration, ...] = tuple(Migration(name, sql) for name, sql in NAMED_MIGRATIONS)

SCHEMA_VERSION = len(MIGRATIONS)


def has_table(conn: StoreConnection, name: str) -> bool:
    return conn.execute(dialect_of(conn).has_table, (name,)).fetchone() is not None


def other_tables(conn: StoreConnection) -> int:
    """How many tables besides ``schema_migrations`` the database holds."""
    return int(conn.execute(dialect_of(conn).count_tables).fetchone()[0])


def applied_migrations(conn: StoreConnection) -> list[str]:
    if not has_table(conn, "schema_migrations"):
        return []
    return [row[0] for row in conn.execute("SELECT name FROM schema_migrations ORDER BY id")]


def _user_version(conn: StoreConnection) -> int:
    if dialect_of(conn).name != "sqlite":
        return 0
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def check_version(conn: StoreConnection) -> int:
    """Return the database's version; raise SchemaTooNewError for a newer one."""
    applied = applied_migrations(conn)
    known = [m.name for m in MIGRATIONS]
    user_version = _user_version(conn)
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


def migrate(conn: StoreConnection, *, target: int = SCHEMA_VERSION) -> list[str]:
    """Apply every pending migration up to ``target``; return the names applied.

    ``conn`` must be in autocommit mode (``isolation_level=None`` on SQLite)
    so each migration gets exactly one explicit transaction. On PostgreSQL the
    caller holds :data:`MIGRATION_LOCK` (:mod:`vae.recordings.backends.pg_open`).
    """
    sqlite = dialect_of(conn).name == "sqlite"
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_ns INTEGER NOT NULL)"
    )
    done = check_version(conn)
    applied: list[str] = []
    for index, migration in enumerate(MIGRATIONS[done:target], start=done + 1):
        conn.execute(dialect_of(conn).begin_write)
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
            if sqlite:
                conn.execute(f"PRAGMA user_version = {index}")
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(Exception):  # a lost connection has rolled back
                conn.execute("ROLLBACK")
            raise
        applied.append(migration.name)
    return applied


def _statements(sql: str) -> list[str]:
    return [s.strip() for s in sql.split(";") if s.strip()]
