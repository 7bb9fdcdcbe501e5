"""A PostgreSQL server stopped under a recording bridge: a bounded, clean failure.

The bridge records into a server of the test's own; once the session is under
way the server is stopped. The writer's next commit fails: the session ends
with ``storage_error``, the run fails with a message naming the failure, new
runs are refused with FAILED_PRECONDITION, the bridge still shuts down
promptly (its last try at the final statuses gives up quickly). Once the
server is back, the database reads consistently: every batch committed
whole, and resume sees the attempt as unfinished (never as completed).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import grpc
import pytest

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import TEST_SETTINGS, scenario, start_run, watch
from tests.pg import PgServer, own_server
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.selection import ResumeState, classify_resume


@pytest.fixture
def server() -> Iterator[PgServer]:
    with own_server() as srv:
        yield srv


async def speaker(bot: TestBot) -> None:
    await bot.speak(tone(25.0, 16000, 300))


async def test_database_server_stopped_while_recording(server: PgServer) -> None:
    url = server.fresh_database()
    bridge = BridgeServer(url, TEST_SETTINGS)
    await bridge.start()
    try:
        async with grpc.aio.insecure_channel(bridge.address) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            run_id = await start_run(stub, [scenario("cut", max_duration=30)], max_auto_retries=0)
            bots = [
                TestBot(bridge.address, role, speaker, run_filter=run_id)
                for role in (common_pb2.ROLE_USER, common_pb2.ROLE_AGENT)
            ]
            tasks = [asyncio.create_task(b.run()) for b in bots]
            await asyncio.wait_for(bots[0].started.wait(), 10)
            assert bridge.writer is not None
            await bridge.writer.flush()  # the attempt's row is in: the stop cuts a recording
            await asyncio.to_thread(server.stop, "fast")
            t0 = time.monotonic()
            events = await watch(stub, run_id, limit_s=20)
            elapsed = time.monotonic() - t0
            finished = events[-1]
            assert finished.kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED
            assert finished.status == bridge_pb2.RUN_STATUS_FAILED
            assert "storage failed" in finished.message and "cannot be written" in finished.message
            ended = [e for e in events if e.kind == bridge_pb2.RUN_EVENT_KIND_SESSION_ENDED]
            assert ended[-1].session.stop_reason == bridge_pb2.STOP_REASON_STORAGE_ERROR
            assert elapsed < 15, elapsed
            await asyncio.wait_for(asyncio.gather(*tasks), 10)
            assert all(b.got.ending.reason == bridge_pb2.STOP_REASON_STORAGE_ERROR for b in bots)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await start_run(stub, [scenario("again")])
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    finally:
        t0 = time.monotonic()
        await asyncio.wait_for(bridge.stop(), 20)
        assert time.monotonic() - t0 < 10
    await asyncio.to_thread(server.start)
    with RecordingReader(url) as reader:
        run = reader.get_run(run_id)
        assert run is not None and str(run.status) != "completed"
        (session,) = reader.sessions(run_id)
        assert session.stop_reason in (None, "storage_error")
        (decision,) = classify_resume(reader, run_id)
        assert decision.state is ResumeState.IN_FLIGHT
        # Audio is committed a segment at a time, in whole batches: no gap inside a channel.
        for channel in ("user", "agent"):
            seqs = [s.seq for s in reader.segments(session.session_id, channel)]
            assert seqs == list(range(len(seqs)))
