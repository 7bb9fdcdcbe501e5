"""``writer.transaction(work)``: a read-modify-write in order with queued writes, on
both back ends, and processes racing to claim the same rows (each claimed once)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.recordings.helpers import add_run, add_session, query
from vae.recordings.backends.locator import Locator
from vae.recordings.backends.writer_conn import Transaction
from vae.recordings.models import EventKind, EventRecord, Side
from vae.recordings.write.writer import RecordingWriter, open_writer

ROOT = Path(__file__).resolve().parents[3]
CLAIMS = "CREATE TABLE IF NOT EXISTS claims (id INTEGER PRIMARY KEY, owner TEXT)"


async def claim_one(tx: Transaction, owner: str) -> int | None:
    """Take the first unclaimed row: the pattern a session queue would use."""
    rows = await tx.execute(
        f"SELECT id FROM claims WHERE owner IS NULL ORDER BY id LIMIT 1{tx.dialect.lock_rows}"
    )
    if not rows:
        return None
    await tx.execute("UPDATE claims SET owner = ? WHERE id = ?", (owner, rows[0][0]))
    assert tx.rowcount == 1
    return int(rows[0][0])


async def test_a_transaction_runs_in_order_with_queued_writes(store: Locator) -> None:
    async with open_writer(store, flush_interval_s=5.0) as w:
        await add_run(w, "r", ["s"])
        sid = await add_session(w, "r", "s", ended=False)
        for i in range(5):
            await w.add_events([EventRecord(sid, Side.USER, EventKind.LOG, i, {"i": i})])

        async def count(tx: Transaction) -> int:
            (n,) = (await tx.execute("SELECT count(*) FROM events WHERE kind = 'log'"))[0]
            return int(n)

        # Queued before it: committed first, although the flush interval is long.
        got = await asyncio.wait_for(w.transaction(count), 3)
        assert got == 5
        # Queued after it, in the same breath: not seen by it.
        w.execute_nowait(
            "INSERT INTO events (session_id, side, kind, bridge_ns, payload_json)"
            " VALUES (?, 'user', 'log', 9, '{}')",
            (sid,),
        )
        later = asyncio.ensure_future(w.transaction(count))
        assert await asyncio.wait_for(later, 3) == 6
        assert w.dialect.skip_locked is store.is_postgres


async def test_a_failing_transaction_rolls_back_and_the_writer_goes_on(store: Locator) -> None:
    async with open_writer(store) as w:
        await add_run(w, "r", ["s"])

        async def half_done(tx: Transaction) -> None:
            await tx.execute("UPDATE runs SET status = 'claimed' WHERE run_id = 'r'")
            raise LookupError("changed my mind")

        with pytest.raises(LookupError, match="changed my mind"):
            await w.transaction(half_done)

        async def refused(tx: Transaction) -> None:
            await tx.execute("UPDATE runs SET status = 'claimed' WHERE run_id = 'r'")
            await tx.execute("INSERT INTO runs (run_id) VALUES ('incomplete')")  # NOT NULL

        with pytest.raises(Exception, match=r"(?i)not.null"):
            await w.transaction(refused)
        assert not w.failed.is_set()
        await w.update_run_status("r", "completed", 1)
    assert query(store, "SELECT run_id, status FROM runs") == [("r", "completed")]


RACER = """
import asyncio, json, sys
from vae.recordings.write.writer import open_writer
from tests.recordings.write.test_writer_transaction import claim_one

async def main(store, owner):
    async with open_writer(store) as w:
        print("ready", flush=True)
        sys.stdin.readline()  # the starting gun: both racers are connected
        got = []
        while (row := await w.transaction(lambda tx: claim_one(tx, owner))) is not None:
            got.append(row)
        print(json.dumps(got), flush=True)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def test_two_processes_racing_claim_each_row_exactly_once(store: Locator) -> None:
    rows = 60

    async def setup() -> None:
        async with open_writer(store) as w:

            async def fill(tx: Transaction) -> None:
                await tx.execute(CLAIMS)
                await tx.executemany("INSERT INTO claims (owner) VALUES (?)", [(None,)] * rows)

            await w.transaction(fill)

    asyncio.run(setup())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    racers = [
        subprocess.Popen([sys.executable, "-c", RACER, str(store), name], cwd=ROOT, env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for name in ("a", "b")
    ]  # fmt: skip
    claimed: dict[str, list[int]] = {}
    try:
        for racer in racers:
            assert racer.stdout is not None and racer.stdout.readline().strip() == "ready"
        for racer in racers:
            assert racer.stdin is not None
            racer.stdin.write("go\n")
            racer.stdin.flush()
        for name, racer in zip(("a", "b"), racers, strict=True):
            out, _ = racer.communicate(timeout=60)
            assert racer.returncode == 0
            claimed[name] = json.loads(out.strip().splitlines()[-1])
    finally:
        for racer in racers:
            if racer.poll() is None:
                racer.kill()
    everything = claimed["a"] + claimed["b"]
    assert sorted(everything) == list(range(1, rows + 1)), claimed  # each row exactly once
    owners = dict(query(store, "SELECT id, owner FROM claims"))
    assert all(owners[row] == name for name, got in claimed.items() for row in got)


async def test_postgres_claimers_skip_each_others_locked_rows(pg_url: str) -> None:
    """On PostgreSQL a claimer does not wait for a row another holds: it takes the next."""
    first = RecordingWriter(pg_url)
    second = RecordingWriter(pg_url)
    await first.start()
    await second.start()
    try:

        async def fill(tx: Transaction) -> None:
            await tx.execute(CLAIMS)
            await tx.executemany("INSERT INTO claims (owner) VALUES (?)", [(None,), (None,)])

        await first.transaction(fill)
        holding = asyncio.Event()
        release = asyncio.Event()

        async def slow_claim(tx: Transaction) -> Any:
            row = await claim_one(tx, "first")
            holding.set()
            await release.wait()  # keeps its row locked, uncommitted
            return row

        slow = asyncio.ensure_future(first.transaction(slow_claim))
        await asyncio.wait_for(holding.wait(), 5)
        # Row 1 is locked by an open transaction: the second claimer takes row 2 at once.
        assert (
            await asyncio.wait_for(second.transaction(lambda tx: claim_one(tx, "second")), 3) == 2
        )
        assert (
            await asyncio.wait_for(second.transaction(lambda tx: claim_one(tx, "second")), 3)
            is None
        )
        release.set()
        assert await asyncio.wait_for(slow, 5) == 1
    finally:
        await first.close()
        await second.close()
    assert query(pg_url, "SELECT id, owner FROM claims ORDER BY id") == [
        (1, "first"),
        (2, "second"),
    ]
