"""A full disk under a worker: its session ends ``storage_error`` at once, never as it ran.

The front door and its worker record to one SQLite file on a small tmpfs.
Once the session is live at the worker, a filler file takes the remaining
space: the worker's writer fails at its next commit, and the worker ends the
session ``storage_error`` then (as the front door ends its own sessions),
instead of letting it run unrecorded to its natural end and reporting that
end to the front door as if it had been recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import grpc
import pytest

from tests.bridge_service.bots import TestBot
from tests.bridge_service.conftest import scenario, start_run, watch
from tests.bridge_service.test_storage_faults import fill
from tests.bridge_service.workers.conftest import AGENT, SETTINGS, USER, at_worker, join
from tests.bridge_service.workers.test_lifecycle import keep_talking
from tests.tmpfs import small_tmpfs
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path, "8m") as disk:
        yield disk


async def test_disk_full_at_a_worker_ends_its_session_storage_error(small_disk: Path) -> None:
    server = BridgeServer(small_disk / "vae.db", replace(SETTINGS, final_state_timeout_s=1.0),
                          workers=2)  # fmt: skip
    await server.start()
    filler = small_disk / "filler"
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            run_id = await start_run(stub, [scenario("full", max_duration=40)], max_auto_retries=0)
            here = [
                TestBot(server.address, role, join=join(role, redirect=True, run_filter=run_id))
                for role in (USER, AGENT)
            ]
            await asyncio.wait_for(asyncio.gather(*(b.run() for b in here)), 20)
            there = [at_worker(b, keep_talking) for b in here]
            tasks = [asyncio.create_task(b.run()) for b in there]
            await asyncio.wait_for(asyncio.gather(*(b.started.wait() for b in there)), 20)
            await asyncio.to_thread(fill, filler)
            t0 = time.monotonic()
            events = await watch(stub, run_id, limit_s=30)
            elapsed = time.monotonic() - t0
            ended = [e for e in events if e.kind == bridge_pb2.RUN_EVENT_KIND_SESSION_ENDED]
            assert ended[-1].session.stop_reason == bridge_pb2.STOP_REASON_STORAGE_ERROR
            assert "storage failed" in ended[-1].session.stop_detail
            assert events[-1].status == bridge_pb2.RUN_STATUS_FAILED
            assert elapsed < 15, elapsed  # the bots talk for 20 s: it did not run them out
            got = await asyncio.wait_for(asyncio.gather(*tasks), 10)
            assert all(g.ending.reason == bridge_pb2.STOP_REASON_STORAGE_ERROR for g in got)
    finally:
        with contextlib.suppress(FileNotFoundError):
            filler.unlink()
        await asyncio.wait_for(server.stop(), 30)
