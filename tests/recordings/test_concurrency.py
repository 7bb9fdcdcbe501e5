"""Readers while the writer writes, and a writer killed with SIGKILL (both back ends)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

from tests.recordings.helpers import add_run, add_session
from vae.recordings.backends.connection import open_store_readonly
from vae.recordings.backends.locator import Locator
from vae.recordings.models import EventKind, EventRecord, Side
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.writer import open_writer

ROOT = Path(__file__).resolve().parents[2]


async def test_reader_sees_consistent_prefixes_while_writing(store: Locator) -> None:
    n = 400
    async with open_writer(store, flush_interval_s=0.01) as w:
        await add_run(w, "r", ["s"])
        sid = await add_session(w, "r", "s", ended=False)
        await w.flush()
        stop = threading.Event()
        problems: list[str] = []
        snapshots: list[int] = []
        saw_end = threading.Event()

        def read_loop() -> None:
            conn = open_store_readonly(store)
            while not stop.is_set():
                # One snapshot for both queries (SQLite's WAL; PostgreSQL's REPEATABLE READ).
                conn.execute("BEGIN")
                rows = conn.execute(
                    "SELECT payload_json FROM events WHERE kind = 'log' ORDER BY id"
                ).fetchall()
                seen = [json.loads(r[0])["i"] for r in rows]
                ended = conn.execute("SELECT status FROM sessions").fetchone()[0]
                conn.execute("COMMIT")
                if seen != list(range(len(seen))):
                    problems.append(f"not a prefix: {seen[:10]}...")
                if ended == "ended" and len(seen) != n:
                    problems.append(f"session ended but only {len(seen)} events visible")
                snapshots.append(len(seen))
                if ended == "ended":
                    saw_end.set()
            conn.close()

        reader = threading.Thread(target=read_loop)
        reader.start()
        try:
            for i in range(n):
                await w.add_events([EventRecord(sid, Side.BRIDGE, EventKind.LOG, i, {"i": i})])
                if i % 50 == 0:
                    await w.flush()
            await w.end_session(sid, ended_ns=1, stop_reason="end_tool", clean_exit=True,
                                user_turns=1, agent_turns=1)  # fmt: skip
            await w.flush()
            # the reader must take at least one snapshot of the finished state
            assert await asyncio.to_thread(saw_end.wait, 10)
        finally:
            stop.set()
            await asyncio.to_thread(reader.join, 10)
    assert not problems, problems[:3]
    assert snapshots[-1] == n
    assert len(set(snapshots)) > 2  # the reader really saw the table grow


WRITER_SCRIPT = """
import asyncio, sys
from vae.recordings.models import EventKind, EventRecord, Side
from vae.recordings.write.writer import open_writer
from tests.recordings.helpers import add_run, add_session

async def main(path):
    async with open_writer(path) as w:
        await add_run(w, "r", [f"s{i}" for i in range(1000)])
        for i in range(1000):
            sid = await add_session(w, "r", f"s{i}")
            events = [EventRecord(sid, Side.USER, EventKind.LOG, j, {"j": j}) for j in range(20)]
            await w.add_events(events)
            await w.flush()
            print(f"committed {i}", flush=True)

asyncio.run(main(sys.argv[1]))
"""


def test_writer_killed_with_sigkill_keeps_every_committed_batch(store: Locator) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER_SCRIPT, str(store)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None
    committed = -1
    try:
        for line in proc.stdout:
            committed = int(line.split()[1])
            if committed >= 7:
                break
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert committed >= 7
    if not store.is_postgres:
        conn = sqlite3.connect(store.file)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()
    with RecordingReader(store) as r:
        sessions = {s.scenario_name: s for s in r.sessions("r")}
        for i in range(committed + 1):
            s = sessions[f"s{i}"]
            assert s.ended_ns is not None
            assert len(r.events(s.session_id, [EventKind.LOG])) == 20
