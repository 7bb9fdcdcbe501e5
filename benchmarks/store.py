"""Store write cost: the batched single writer against one awaited statement per row,
on SQLite and on PostgreSQL.

For each back end, two loads go through ``vae.recordings.write.writer.RecordingWriter``
(batched ``executemany`` per flush, one transaction per batch) and, as the
baseline measured in the same run, through one awaited INSERT + COMMIT per
row on a plain connection of the same driver (aiosqlite, psycopg) — the
pattern the single writer exists to avoid:

- **rows**: N small event rows;
- **audio**: N/50 one-second segments of 16 kHz PCM (32 KB each, plus the
  frame index), the bulk of what a recording writes.

Prints µs per row (wall and CPU of this process), rows/s and audio MB/s, and
the ratios: per-row over batched on each back end, PostgreSQL over SQLite.

PostgreSQL: ``--postgres URL`` measures an existing (empty) database;
``--postgres auto`` (the default when Debian's PostgreSQL is installed)
starts a throw-away server with PostgreSQL's durable defaults (fsync and
synchronous commit on) in a temporary folder on loopback; ``--postgres
none`` measures SQLite only. SQLite runs in WAL mode with synchronous=NORMAL
(vae's settings): its commits do not wait for the disk, PostgreSQL's do.

Usage: ``python benchmarks/store.py [--rows N] [--quick] [--postgres auto|none|URL]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vae.recordings.audio import SegmentBuilder
from vae.recordings.backends.connection import open_store
from vae.recordings.backends.locator import Locator, locate
from vae.recordings.models import (
    Channel,
    EventKind,
    EventRecord,
    RunRecord,
    RunStatus,
    SessionRecord,
    SessionStatus,
    Side,
)
from vae.recordings.write.writer import open_writer

RATE = 16000
SECOND = b"\x01\x00" * RATE  # one second of 16 kHz PCM16
EVENT_SQL = (
    "INSERT INTO events (session_id, side, kind, bridge_ns, bot_ns, payload_json)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)
SEGMENT_SQL = (
    "INSERT INTO audio_segments (session_id, channel, seq, start_offset, sample_count,"
    " sample_rate, first_arrival_ns, frames, pcm) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
Cost = tuple[float, float]  # wall, CPU seconds


def _segments(n: int) -> list[Any]:
    """``n`` one-second segments, as the bridge's segment builder makes them."""
    builder = SegmentBuilder("s", Channel.USER, RATE)
    out: list[Any] = []
    frame = 320
    for i in range(n * RATE // frame):
        out.extend(builder.add(SECOND[: frame * 2], i * frame, i, i * 20_000_000))
    out.extend(builder.close())
    return out[:n]


async def _setup(store: Locator) -> None:
    async with open_writer(store) as w:
        await w.create_run(RunRecord("r", 0, RunStatus.RUNNING, "bench"))
        await w.start_session(SessionRecord("s", "r", "x", 1, SessionStatus.RUNNING, 0))


async def batched(store: Locator, rows: int, segments: list[Any]) -> tuple[Cost, Cost]:
    await _setup(store)
    async with open_writer(store) as w:
        wall, cpu = time.perf_counter(), time.process_time()
        for i in range(rows):
            await w.add_events([EventRecord("s", Side.USER, EventKind.LOG, i, {"i": i})])
        await w.flush()
        events = (time.perf_counter() - wall, time.process_time() - cpu)
        wall, cpu = time.perf_counter(), time.process_time()
        for seg in segments:
            await w.add_segment(seg)
        await w.flush()
        return events, (time.perf_counter() - wall, time.process_time() - cpu)


def _segment_row(seg: Any, seq: int) -> tuple[Any, ...]:
    return ("s", "to_user", seq, seg.start_offset, seg.sample_count, seg.sample_rate,
            seg.first_arrival_ns, seg.frames, seg.pcm)  # fmt: skip


class _PerRow:
    """One awaited INSERT + COMMIT per row on a plain connection of the back end's driver."""

    def __init__(self, store: Locator) -> None:
        self.store = store
        self.conn: Any = None

    async def __aenter__(self) -> _PerRow:
        if self.store.is_postgres:
            import psycopg

            self.conn = await psycopg.AsyncConnection.connect(str(self.store), autocommit=True)
        else:
            import aiosqlite

            self.conn = await aiosqlite.connect(self.store.file, isolation_level=None)
            await self.conn.execute("PRAGMA journal_mode = WAL")
            await self.conn.execute("PRAGMA synchronous = NORMAL")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.conn.close()

    async def insert(self, sql: str, row: tuple[Any, ...]) -> None:
        if self.store.is_postgres:
            from vae.recordings.backends.dialect import POSTGRES

            await self.conn.execute("BEGIN")
            await self.conn.execute(POSTGRES.translate(sql), row)
        else:
            await self.conn.execute("BEGIN")
            await self.conn.execute(sql, row)
        await self.conn.execute("COMMIT")


async def per_row(store: Locator, rows: int, segments: list[Any]) -> tuple[Cost, Cost]:
    await _setup(store)
    async with _PerRow(store) as db:
        wall, cpu = time.perf_counter(), time.process_time()
        for i in range(rows):
            await db.insert(EVENT_SQL, ("s", "user", "log", i, 0, f'{{"i":{i}}}'))
        events = (time.perf_counter() - wall, time.process_time() - cpu)
        wall, cpu = time.perf_counter(), time.process_time()
        for seq, seg in enumerate(segments):
            await db.insert(SEGMENT_SQL, _segment_row(seg, seq))
        return events, (time.perf_counter() - wall, time.process_time() - cpu)


@contextlib.contextmanager
def _stores(tmp: Path, postgres: str) -> Iterator[list[tuple[str, Any]]]:
    """(name, factory of a fresh empty store) for each back end measured."""
    stores: list[tuple[str, Any]] = []
    counter = iter(range(1_000))
    stores.append(("sqlite", lambda: locate(tmp / f"s{next(counter)}.db")))
    if postgres == "none":
        yield stores
        return
    if postgres != "auto":
        urls = iter([postgres])
        stores.append(("postgresql", lambda: locate(next(urls))))
        yield stores
        return
    from tests import pg

    why = pg.problem()
    if why is not None:
        print(f"postgresql: not measured ({why}; give --postgres URL or install it)")
        yield stores
        return
    server = pg.PgServer(durable=True)
    try:
        server.start()
        stores.append(("postgresql", lambda: locate(server.fresh_database())))
        yield stores
    finally:
        server.remove()


def _line(name: str, rows: int, nseg: int, events: Cost, audio: Cost) -> str:
    mb = nseg * len(SECOND) / 1e6
    return (
        f"{name:<26} rows {events[0] / rows * 1e6:7.1f} µs/row wall {events[1] / rows * 1e6:6.1f}"
        f" CPU ({rows / events[0]:8,.0f} rows/s) | audio {mb / audio[0]:6.1f} MB/s wall"
        f" ({nseg / audio[0]:6.1f} s of audio per s, {audio[1] / nseg * 1e3:5.2f} ms CPU/segment)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="2,000 rows")
    parser.add_argument("--postgres", default="auto", help="auto (default), none, or a URL")
    args = parser.parse_args()
    rows = 2_000 if args.quick else args.rows
    segments = _segments(max(rows // 50, 1))
    print(f"rows: {rows} events; audio: {len(segments)} one-second 16 kHz segments")
    results: dict[str, dict[str, tuple[Cost, Cost]]] = {}
    with tempfile.TemporaryDirectory() as tmp, _stores(Path(tmp), args.postgres) as stores:
        for name, fresh in stores:
            open_store(fresh()).close()  # connect and migrate once outside the timings
            b = asyncio.run(batched(fresh(), rows, segments))
            p = asyncio.run(per_row(fresh(), rows, segments))
            results[name] = {"batched": b, "per_row": p}
            print(_line(f"{name} per row", rows, len(segments), *p))
            print(_line(f"{name} single writer", rows, len(segments), *b))
            print(
                f"{name}: per-row / writer = {p[0][0] / b[0][0]:.1f}x wall, "
                f"{p[0][1] / b[0][1]:.1f}x CPU (rows); {p[1][0] / b[1][0]:.1f}x wall (audio)"
            )
    if "postgresql" in results:
        lite, post = results["sqlite"]["batched"], results["postgresql"]["batched"]
        print(
            f"single writer, postgresql / sqlite: rows {post[0][0] / lite[0][0]:.2f}x wall, "
            f"{post[0][1] / lite[0][1]:.2f}x CPU; audio {post[1][0] / lite[1][0]:.2f}x wall"
        )


if __name__ == "__main__":
    main()
