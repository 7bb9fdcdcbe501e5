"""``vae redact RUN``: a stored run redacted into a new store, or in place.

Either way the run is first copied, redacted, into a store that never held
the original — the new store (``dest``), or a temporary SQLite file beside the
source — row by row through :mod:`vae.recordings.redact.tables`: texts and
JSON documents with placeholders, audio masked where the transcripts found
personal data (:mod:`vae.recordings.redact.session_mask`), every finding a
ledger row, the pass a ``redactions`` row.

In place, the run's rows are then replaced in one transaction: deleted (with
SQLite's ``secure_delete``, which zeroes what it frees) and copied back from
the temporary store; cached judge requests and transcriptions holding
personal data are deleted. SQLite then checkpoints its WAL (truncating it),
rewrites the file (``VACUUM``: no free page keeps old content) and truncates
the WAL again. PostgreSQL keeps old row versions until ``VACUUM FULL``
rewrites the tables; it is run on the tables touched, and when the role may
not run it the result says so — the operator's backups and WAL archives are
theirs to deal with (docs/privacy.md).

A run already redacted with the same configuration (its fingerprint) is
left untouched: redacting twice changes nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vae.recordings.backends.connection import open_store, open_store_readonly
from vae.recordings.backends.dialect import StoreConnection, dialect_of
from vae.recordings.backends.locator import StoreRef, locate
from vae.recordings.errors import StoreError
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.selection import select_run
from vae.recordings.redact import ledger
from vae.recordings.redact.copy_run import RunCopier
from vae.recordings.redact.model import Redaction
from vae.recordings.redact.tables import GLOBAL_TABLES, RUN_TABLES, where


class RewriteError(StoreError):
    """The rewrite cannot start (the run already in the new store, ...): nothing was written."""


@dataclass
class RewriteResult:
    run_id: str
    #: "copy" or "in-place".
    mode: str
    dest: str
    #: Already redacted with this configuration: nothing was written.
    already: bool = False
    summary: dict[str, Any] = field(default_factory=dict)
    purged_cache_rows: int = 0
    #: What the database did to forget the original (vacuum, checkpoints) or could not do.
    storage: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "mode": self.mode, "dest": self.dest,
                "already_redacted": self.already, "summary": self.summary,
                "purged_cache_rows": self.purged_cache_rows, "storage": self.storage}  # fmt: skip


def rewrite_run(
    source: StoreRef, run_ref: str, redaction: Redaction, *, dest: StoreRef | None = None
) -> RewriteResult:
    """Redact ``run_ref`` of ``source`` into ``dest`` (a new store), or in place (``dest`` None)."""
    src = locate(source)
    fingerprint = str(redaction.describe().get("fingerprint", ""))
    with RecordingReader(src) as reader:
        run_id = select_run(reader, run_ref)
        done = {p["fingerprint"] for p in ledger.passes(reader.conn, run_id)}
    if dest is None:
        shown = src.url or str(src.path)
        if fingerprint in done:
            return RewriteResult(run_id, "in-place", shown, already=True)
        return _in_place(src, run_id, redaction)
    target = locate(dest)
    shown = target.url or str(target.path)
    if _where(target) == _where(src):
        raise RewriteError("--out names the store being read: give a new store, or --in-place")
    if target.exists():
        with RecordingReader(target) as existing:
            if run_id in existing.run_ids():
                there = {p["fingerprint"] for p in ledger.passes(existing.conn, run_id)}
                if fingerprint in there:
                    return RewriteResult(run_id, "copy", shown, already=True)
                raise RewriteError(f"{shown} already holds run {run_id}; choose another store")
    summary = _copy(src, target, run_id, redaction, "copy")
    result = RewriteResult(run_id, "copy", shown, summary=summary)
    result.storage += _forget(target)
    return result


def _where(locator: Any) -> str:
    return str(locator.url or Path(locator.path).resolve())


def _copy(src: Any, target: Any, run_id: str, redaction: Redaction, mode: str) -> dict[str, Any]:
    reader = open_store_readonly(src)
    writer = open_store(target)
    try:
        writer.execute(dialect_of(writer).begin_write)
        try:
            copier = RunCopier(reader, writer, run_id, redaction, mode)
            copier.copy()
            entries = copier.ledger
            summary = ledger.summarise(entries)
            for row in ledger.ledger_rows(entries):
                writer.execute(ledger.LEDGER_SQL, row)
            writer.execute(
                ledger.PASS_SQL,
                ledger.pass_row(run_id, mode, time.time_ns(), redaction.describe(), summary),
            )
            writer.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(Exception):
                writer.execute("ROLLBACK")
            raise
    finally:
        reader.close()
        writer.close()
    return summary


def _in_place(src: Any, run_id: str, redaction: Redaction) -> RewriteResult:
    shown = src.url or str(src.path)
    folder = Path(src.path).resolve().parent if src.path is not None else None
    handle, temp = tempfile.mkstemp(prefix=".vae-redact-", suffix=".db", dir=folder)
    os.close(handle)
    os.unlink(temp)  # a new store: open_store creates and migrates it
    try:
        summary = _copy(src, temp, run_id, redaction, "in-place")
        purged = _replace(src, temp, run_id, redaction)
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp + suffix)
    result = RewriteResult(run_id, "in-place", shown, summary=summary, purged_cache_rows=purged)
    result.storage += _forget(src)
    return result


def _replace(src: Any, temp: str, run_id: str, redaction: Redaction) -> int:
    """Replace the run's rows in ``src`` with the temporary store's; purge caches."""
    conn = open_store(src)
    copy = sqlite3.connect(temp)
    purged = 0
    try:
        sqlite = dialect_of(conn).name == "sqlite"
        if sqlite:
            conn.execute("PRAGMA secure_delete = ON")
        conn.execute(dialect_of(conn).begin_write)
        try:
            for table in reversed(RUN_TABLES):
                conn.execute(f"DELETE FROM {table.name} WHERE {where(table)}", (run_id,))
            for table in RUN_TABLES:
                cols = ", ".join(table.stored)
                marks = ", ".join("?" * len(table.stored))
                order = " ORDER BY id" if "id" in table.columns else ""
                rows = copy.execute(
                    f"SELECT {cols} FROM {table.name} WHERE {where(table)}{order}", (run_id,)
                )
                for row in rows:
                    conn.execute(f"INSERT INTO {table.name} ({cols}) VALUES ({marks})", row)
            purged = _purge_caches(conn, redaction)
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(Exception):
                conn.execute("ROLLBACK")
            raise
    finally:
        copy.close()
        conn.close()
    return purged


def _purge_caches(conn: StoreConnection, redaction: Redaction) -> int:
    """Delete cached judge requests and transcriptions holding personal data."""
    purged = 0
    for name, columns in GLOBAL_TABLES.items():
        texts = [c for c, kind in columns.items() if kind == "purge"]
        if not texts:
            continue
        rows = conn.execute(f"SELECT cache_key, {', '.join(texts)} FROM {name}").fetchall()
        for key, *values in rows:
            if any(redaction.text(_plain(v))[1] for v in values if v):
                conn.execute(f"DELETE FROM {name} WHERE cache_key = ?", (key,))
                purged += 1
    return purged


def _plain(value: str) -> str:
    """A cached JSON document's strings as one text (escapes undone), for detection."""
    try:
        doc = json.loads(value)
    except (TypeError, ValueError):
        return str(value)
    out: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            for k, item in v.items():
                out.append(str(k))
                walk(item)
        elif isinstance(v, list):
            for item in v:
                walk(item)

    walk(doc)
    return "\n".join(out)


def _forget(store: Any) -> list[str]:
    """Make the database drop what it still holds of the old rows; say what was done."""
    conn = open_store(store)
    done: list[str] = []
    try:
        if dialect_of(conn).name == "sqlite":
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return ["sqlite: WAL checkpointed and truncated, file rewritten (VACUUM)"]
        for table in [t.name for t in RUN_TABLES] + [n for n in GLOBAL_TABLES if "cache" in n]:
            try:
                conn.execute(f"VACUUM FULL {table}")
                done.append(f"postgresql: VACUUM FULL {table}")
            except Exception as exc:
                done.append(
                    f"postgresql: VACUUM FULL {table} failed ({exc}); run it as the table's "
                    "owner, and see docs/privacy.md for WAL archives and backups"
                )
        return done
    finally:
        conn.close()
