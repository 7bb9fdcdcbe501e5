"""Store write cost: the batched single writer against one awaited statement per row.

Writes N event rows (and N/50 one-second audio segments) through
``recordings.writer.RecordingWriter`` and, as the baseline measured in the same
run, the same rows with one awaited ``aiosqlite`` INSERT + COMMIT per row (the
pattern the single writer exists to avoid). Prints µs/row of wall and CPU time for both and
the ratio. Usage: ``python benchmarks/store.py [--rows N] [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import aiosqlite

from recordings.audio import SegmentBuilder
from recordings.connection import open_database
from recordings.models import (
    Channel,
    EventKind,
    EventRecord,
    RunRecord,
    RunStatus,
    SessionRecord,
    SessionStatus,
    Side,
)
from recordings.writer import open_writer

PCM = b"\x01\x00" * 320  # one 20 ms frame at 16 kHz


async def batched(path: Path, rows: int) -> tuple[float, float]:
    async with open_writer(path) as w:
        await w.create_run(RunRecord("r", 0, RunStatus.RUNNING, "bench"))
        await w.start_session(SessionRecord("s", "r", "x", 1, SessionStatus.RUNNING, 0))
        await w.flush()
        builder = SegmentBuilder("s", Channel.USER, 16000)
        wall, cpu = time.perf_counter(), time.process_time()
        for i in range(rows):
            await w.add_events([EventRecord("s", Side.USER, EventKind.LOG, i, {"i": i})])
            for seg in builder.add(PCM, i * 320, i, i):
                await w.add_segment(seg)
        await w.flush()
        return time.perf_counter() - wall, time.process_time() - cpu


async def per_row(path: Path, rows: int) -> tuple[float, float]:
    open_database(path).close()
    async with aiosqlite.connect(path, isolation_level=None) as db:
        await db.execute("PRAGMA journal_mode = WAL")
        await db.execute("PRAGMA synchronous = NORMAL")
        await db.execute("INSERT INTO runs (run_id, created_ns, status, vae_version) "
                         "VALUES ('r', 0, 'running', 'bench')")  # fmt: skip
        await db.execute("INSERT INTO sessions (session_id, run_id, scenario_name, attempt, "
                         "status, started_ns) VALUES ('s', 'r', 'x', 1, 'running', 0)")  # fmt: skip
        wall, cpu = time.perf_counter(), time.process_time()
        for i in range(rows):
            await db.execute("BEGIN")
            await db.execute(
                "INSERT INTO events (session_id, side, kind, bridge_ns, bot_ns, payload_json)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                ("s", "user", "log", i, 0, f'{{"i":{i}}}'),
            )
            await db.execute("COMMIT")
        return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="2,000 rows")
    args = parser.parse_args()
    rows = 2_000 if args.quick else args.rows
    with tempfile.TemporaryDirectory() as tmp:
        b_wall, b_cpu = asyncio.run(batched(Path(tmp) / "batched.db", rows))
        p_wall, p_cpu = asyncio.run(per_row(Path(tmp) / "per_row.db", rows))
    print(f"rows: {rows} events (+ {rows // 50} one-second audio segments on the batched side)")
    print(f"baseline, one awaited statement+commit per row: {p_wall / rows * 1e6:7.1f} µs/row wall,"
          f" {p_cpu / rows * 1e6:7.1f} µs/row CPU")  # fmt: skip
    print(f"vae single writer, batched executemany:        {b_wall / rows * 1e6:7.1f} µs/row wall,"
          f" {b_cpu / rows * 1e6:7.1f} µs/row CPU")  # fmt: skip
    print(f"ratio (baseline / writer): {p_wall / b_wall:.1f}x wall, {p_cpu / b_cpu:.1f}x CPU")


if __name__ == "__main__":
    main()
