"""Every column of every table is named in the redaction's table: none can be forgotten."""

from __future__ import annotations

import sqlite3

from vae.recordings.backends.migrations import migrate
from vae.recordings.redact.tables import GLOBAL_TABLES, RUN_TABLES

KINDS = {"key", "text", "json", "pcm", "hash", "keep", "purge"}


def test_every_table_and_column_is_classified() -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    migrate(conn)
    schema = {
        table: [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    named = {t.name: list(t.columns) for t in RUN_TABLES} | {
        name: list(cols) for name, cols in GLOBAL_TABLES.items()
    }
    assert set(schema) == set(named), "a table the redaction does not know (or no longer exists)"
    for table, columns in schema.items():
        assert sorted(columns) == sorted(named[table]), table
    kinds = {k for t in RUN_TABLES for k in t.columns.values()}
    kinds |= {k for cols in GLOBAL_TABLES.values() for k in cols.values()}
    assert kinds <= KINDS
    # Every JSON document of a run is redacted, never kept as it is.
    for t in RUN_TABLES:
        if t.name not in ("redactions", "redaction_ledger"):
            kept = [c for c, kind in t.columns.items() if c.endswith("_json") and kind != "json"]
            assert kept == [], t.name
