"""Running ``vae load`` as a user does: its own process, the example load suite, buzz voices.

``vae load`` installs its own Ctrl-C handling and starts child processes (the
reference agent), so every end-to-end test runs it as a subprocess of the
checkout, reads its JSON from stdout and the store it recorded into.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from tests.helpers import ROOT

SUITE = ROOT / "examples" / "load"


async def start_load(db: Path, *args: str) -> asyncio.subprocess.Process:
    """``vae load examples/load --db DB --tts buzz --json ARGS`` in its own process."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vae.cli.main", "load", str(SUITE), "--db", str(db),
        "--tts", "buzz", "--json", *args,
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def finish(proc: asyncio.subprocess.Process, limit_s: float) -> tuple[int, Any, str]:
    """Its exit code, its JSON document and its stderr."""
    out, err = await asyncio.wait_for(proc.communicate(), limit_s)
    assert proc.returncode is not None
    text = err.decode(errors="replace")
    assert out, f"no JSON on stdout (exit {proc.returncode}): {text[-3000:]}"
    return proc.returncode, json.loads(out), text


async def run_load(db: Path, *args: str, limit_s: float = 200.0) -> tuple[int, Any, str]:
    return await finish(await start_load(db, *args), limit_s)


def runs_like(db: Path, pattern: str) -> list[tuple[str, str]]:
    """(run id, status) of the runs whose id matches the SQL LIKE ``pattern``."""
    rows = _query(db, "SELECT run_id, status FROM runs WHERE run_id LIKE ? ORDER BY run_id",
                  (pattern,))  # fmt: skip
    return [(r[0], r[1]) for r in rows]


def live_sessions(db: Path, run_id: str) -> int:
    """Sessions of ``run_id`` started and not yet ended."""
    rows = _query(db, "SELECT count(*) FROM sessions WHERE run_id = ? AND ended_ns IS NULL",
                  (run_id,))  # fmt: skip
    return int(rows[0][0]) if rows else 0


def _query(db: Path, sql: str, args: tuple[object, ...]) -> list[tuple[object, ...]]:
    """Rows of ``sql``, or none while the store is not there yet (being created)."""
    if not db.exists():
        return []
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return list(conn.execute(sql, args).fetchall())
    except sqlite3.OperationalError:  # the tables are being created
        return []
