"""A full disk under a recording bridge: a bounded, clean failure.

The database lives on a small tmpfs (tests run as root, so mounting one is
possible); once the session is under way a filler file takes the remaining
space. The writer's next commit fails with "database or disk is full": the
session ends with ``storage_error``, the run fails with a message naming the
failure, new runs are refused with FAILED_PRECONDITION, the bridge still
shuts down promptly, and once space is back the final statuses are recorded
(salvage) in a database that passes SQLite's integrity check.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import TEST_SETTINGS, scenario, start_run, watch
from tests.tmpfs import small_tmpfs
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.read.reader import RecordingReader

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path, "4m") as disk:
        yield disk


def fill(path: Path) -> None:
    """Take every free byte of the file system holding ``path``."""
    with path.open("wb") as f, contextlib.suppress(OSError):
        while True:
            f.write(bytes(64 * 1024))
            f.flush()


async def speaker(bot: TestBot) -> None:
    await bot.speak(tone(25.0, 16000, 300))


async def test_disk_full_while_recording(small_disk: Path) -> None:
    db = small_disk / "vae.db"
    server = BridgeServer(db, TEST_SETTINGS)
    await server.start()
    filler = small_disk / "filler"
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            run_id = await start_run(stub, [scenario("full", max_duration=30)], max_auto_retries=0)
            bots = [
                TestBot(server.address, role, speaker, run_filter=run_id)
                for role in (common_pb2.ROLE_USER, common_pb2.ROLE_AGENT)
            ]
            tasks = [asyncio.create_task(b.run()) for b in bots]
            await asyncio.wait_for(bots[0].started.wait(), 10)
            await asyncio.to_thread(fill, filler)
            t0 = time.monotonic()
            events = await watch(stub, run_id, limit_s=20)
            elapsed = time.monotonic() - t0
            finished = events[-1]
            assert finished.kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED
            assert finished.status == bridge_pb2.RUN_STATUS_FAILED
            assert "storage failed" in finished.message and "full" in finished.message
            ended = [e for e in events if e.kind == bridge_pb2.RUN_EVENT_KIND_SESSION_ENDED]
            assert ended[-1].session.stop_reason == bridge_pb2.STOP_REASON_STORAGE_ERROR
            assert elapsed < 15, elapsed
            await asyncio.wait_for(asyncio.gather(*tasks), 10)
            assert all(b.got.ending.reason == bridge_pb2.STOP_REASON_STORAGE_ERROR for b in bots)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await start_run(stub, [scenario("again")])
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert "cannot record" in (refused.value.details() or "")
    finally:
        with contextlib.suppress(FileNotFoundError):
            filler.unlink()  # room again: the final statuses can be salvaged
        await asyncio.wait_for(server.stop(), 20)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    with RecordingReader(db) as reader:
        (session,) = reader.sessions(run_id)
        assert session.stop_reason == "storage_error"
        run = reader.get_run(run_id)
        assert run is not None and str(run.status) == "failed"


async def test_sigterm_ends_a_bridge_whose_disk_is_full(small_disk: Path) -> None:
    """A real `vae bridge serve` process: full disk mid-run, then SIGTERM — a prompt exit."""
    root = ROOT
    bridge = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vae.cli.main", "bridge", "serve", "--address", "127.0.0.1:0",
        "--db", str(small_disk / "vae.db"), "--final-state-timeout", "1",
        cwd=root, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(root)},
    )  # fmt: skip
    filler = small_disk / "filler"
    try:
        assert bridge.stdout is not None
        line = await asyncio.wait_for(bridge.stdout.readline(), 30)
        assert line.startswith(b"vae bridge listening on "), line
        address = line.decode().rsplit(" ", 1)[1].strip()  # the kernel picked the port
        async with grpc.aio.insecure_channel(address) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            run_id = await start_run(stub, [scenario("full", max_duration=30)], max_auto_retries=0)
            bots = [
                TestBot(address, role, speaker, run_filter=run_id)
                for role in (common_pb2.ROLE_USER, common_pb2.ROLE_AGENT)
            ]
            tasks = [asyncio.create_task(b.run()) for b in bots]
            await asyncio.wait_for(bots[0].started.wait(), 10)
            await asyncio.to_thread(fill, filler)
            events = await watch(stub, run_id, limit_s=20)
            assert events[-1].status == bridge_pb2.RUN_STATUS_FAILED
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 10)
        bridge.send_signal(signal.SIGTERM)
        _out, err = await asyncio.wait_for(bridge.communicate(), 20)
        assert bridge.returncode == 0, err.decode()[-2000:]
        assert b"Traceback" not in err, err.decode()[-2000:]
    finally:
        if bridge.returncode is None:
            bridge.kill()
            await bridge.wait()
        with contextlib.suppress(FileNotFoundError):
            filler.unlink()
