"""The ``redactions`` and ``redaction_ledger`` rows: each pass over a run, and what it redacted.

Written by whatever redacts (the live filter, the rewrite), read by the
report, ``vae scores show --json`` and the rescore (a scoring of a redacted
run says so). A pass's row holds the configuration (never an API key) and its
fingerprint: a second pass with the same fingerprint has nothing to do.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import astuple
from typing import Any

from vae.recordings.backends.dialect import StoreConnection
from vae.recordings.redact.model import LedgerEntry

LEDGER_SQL = (
    "INSERT INTO redaction_ledger (run_id, session_id, location, entity, channel, start_s,"
    " end_s, method, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
PASS_SQL = (
    "INSERT INTO redactions (run_id, mode, created_ns, fingerprint, config_json, summary_json)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)


def ledger_rows(entries: Iterable[LedgerEntry]) -> list[tuple[Any, ...]]:
    return [tuple(round(v, 3) if isinstance(v, float) else v for v in astuple(e)) for e in entries]


def pass_row(
    run_id: str, mode: str, created_ns: int, describe: dict[str, Any], summary: dict[str, Any]
) -> tuple[Any, ...]:
    return (run_id, mode, created_ns, str(describe.get("fingerprint", "")),
            json.dumps(describe, sort_keys=True), json.dumps(summary, sort_keys=True))  # fmt: skip


def summarise(entries: Sequence[LedgerEntry]) -> dict[str, Any]:
    """Counts per type, of text fields and of masked audio spans (whole turns apart)."""
    text = Counter(e.entity for e in entries if e.location != "audio")
    audio = Counter(e.entity for e in entries if e.location == "audio" and e.method != "none")
    turns = sum(1 for e in entries if e.location == "audio" and e.method == "turn")
    return {"text": dict(text), "audio": dict(audio), "whole_turns": turns}


def passes(conn: StoreConnection, run_id: str) -> list[dict[str, Any]]:
    """Every redaction pass over ``run_id``, oldest first (empty: never redacted)."""
    if not _has(conn, "redactions"):
        return []
    rows = conn.execute(
        "SELECT mode, created_ns, fingerprint, config_json, summary_json FROM redactions"
        " WHERE run_id = ? ORDER BY created_ns, id",
        (run_id,),
    )
    return [
        {"mode": r[0], "created_ns": r[1], "fingerprint": r[2], "describe": json.loads(r[3]),
         "summary": json.loads(r[4])}
        for r in rows
    ]  # fmt: skip


def entries(conn: StoreConnection, run_id: str) -> list[LedgerEntry]:
    if not _has(conn, "redaction_ledger"):
        return []
    rows = conn.execute(
        "SELECT run_id, session_id, location, entity, channel, start_s, end_s, method, note"
        " FROM redaction_ledger WHERE run_id = ? ORDER BY session_id, start_s, id",
        (run_id,),
    )
    return [LedgerEntry(*r) for r in rows]


def _has(conn: StoreConnection, table: str) -> bool:
    from vae.recordings.backends.migrations import has_table

    return has_table(conn, table)
