"""Connector pools through a real bridge: capacity queues sessions, a pool runs
them side by side, refusals are retried for a bounded time, then recorded."""

from __future__ import annotations

import itertools
import time

import pytest

from tests.bridge_service.conftest import scenario, start_run, watch
from tests.helpers import fake_connector
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.connectors.base import ConnectorConfig, ConnectorOptionsError
from vae.bridge_service.connectors.pool import ConnectorPools
from vae.bridge_service.runs.attempt_runner import session_id_for
from vae.bridge_service.server import BridgeServer
from vae.recordings.errors import StorageError
from vae.recordings.models import SessionRecord, Side
from vae.recordings.read.reader import RecordingReader

USER = fake_connector("fake://user", speak_s=0.3, end=True)


def _spans(bridge: BridgeServer, run_id: str) -> list[tuple[int, int, str]]:
    with RecordingReader(bridge.db_path) as r:
        return sorted(
            (s.started_ns, s.ended_ns or 0, s.agent_bot["labels"]["endpoint"])
            for s in r.sessions(run_id)
        )


async def test_sessions_beyond_capacity_wait_for_the_endpoint(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    agent = fake_connector("fake://one", speak_s=0.2)
    agent.capacity = 1
    user = fake_connector("fake://user", speak_s=0.3, end=True)
    user.capacity = 3
    docs = [scenario(f"s{i}") for i in range(3)]
    run_id = await start_run(stub, docs, concurrency=4, user_connector=user, agent_connector=agent)
    events = await watch(stub, run_id)
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    spans = _spans(bridge, run_id)
    assert len(spans) == 3
    for (_, end, _), (start, _, _) in itertools.pairwise(spans):
        assert start >= end  # one at a time: the next waited for the endpoint
    with RecordingReader(bridge.db_path) as r:
        assert {s.stop_reason for s in r.sessions(run_id)} == {"user_hang_up"}


async def test_a_pool_of_two_runs_two_sessions_at_once(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    agent = fake_connector("fake://a", speak_s=1.0)
    agent.pool_urls.append("fake://b")
    user = fake_connector("fake://user2", speak_s=1.0, end=True)
    user.capacity = 2
    docs = [scenario("p1"), scenario("p2")]
    run_id = await start_run(stub, docs, concurrency=4, user_connector=user, agent_connector=agent)
    await watch(stub, run_id)
    (_s1, e1, u1), (s2, _e2, u2) = _spans(bridge, run_id)
    assert {u1, u2} == {"fake://a", "fake://b"}
    assert s2 < e1  # they overlapped


async def test_refusals_are_retried_then_the_session_runs(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    agent = fake_connector("fake://starting", speak_s=0.2, fail_dials=2)
    run_id = await start_run(stub, [scenario()], user_connector=USER, agent_connector=agent)
    events = await watch(stub, run_id)
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED


async def test_an_endpoint_that_keeps_refusing_fails_in_bounded_time(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    agent = fake_connector("fake://down", fail_dial=True)
    agent.connect_timeout_s = 1.0
    t0 = time.monotonic()
    run_id = await start_run(
        stub, [scenario()], max_auto_retries=0, user_connector=USER, agent_connector=agent
    )
    events = await watch(stub, run_id)
    assert time.monotonic() - t0 < 10
    assert events[-1].status == bridge_pb2.RUN_STATUS_FAILED
    with RecordingReader(bridge.db_path) as r:
        (s,) = r.sessions(run_id)
    assert s.stop_reason == "connector_failed"
    assert "fake://down" in s.stop_detail and "1 s of retries" in s.stop_detail


async def test_wrong_options_fail_at_once_and_free_the_slot() -> None:
    pools = ConnectorPools()
    config = ConnectorConfig("pipecat", "ws://127.0.0.1:9", {"bogus": 1})
    with pytest.raises(ConnectorOptionsError, match="bogus"):
        await pools.dial(config, Side.AGENT)
    assert pools.load("ws://127.0.0.1:9") == 0


async def test_a_store_error_at_session_start_frees_the_slot_for_the_retry(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failed attempt's leased endpoints are closed: the retry gets the one slot."""
    writer = bridge.writer
    assert writer is not None
    real = writer.start_session
    failed: list[str] = []

    async def fail_once(record: SessionRecord) -> None:
        if not failed:
            failed.append(record.session_id)
            raise StorageError("disk full (injected)")
        await real(record)

    monkeypatch.setattr(writer, "start_session", fail_once)
    agent = fake_connector("fake://single", speak_s=0.2)
    agent.capacity = 1
    user = fake_connector("fake://user3", speak_s=0.3, end=True)
    user.capacity = 1
    run_id = await start_run(
        stub,
        [scenario("leak")],
        max_auto_retries=1,
        auto_retry_backoff_s=0.0,
        user_connector=user,
        agent_connector=agent,
    )
    events = await watch(stub, run_id, limit_s=15)
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    with RecordingReader(bridge.db_path) as r:
        reasons = [(s.attempt, s.stop_reason) for s in r.sessions(run_id)]
    assert reasons == [(1, "bridge_error"), (2, "user_hang_up")]
    assert failed == [session_id_for(run_id, "leak", 1)]
    assert bridge.runs is not None
    pools = bridge.runs.executor.connectors
    assert pools.load("fake://single") == pools.load("fake://user3") == 0
