"""The front door's end of RunSession against a stand-in worker on a real gRPC server.

Every way the call can end without a result is :class:`WorkerGone` — never a
bare ``CancelledError``, which would end the run's scenario task silently
(the run would then read "only 1 of 2 scenarios ran" with nothing retried):

- the channel closed under a waiting read (the front door noticed the
  worker's exit and closed its channel first): gone, not answered;
- the server going away mid-call: gone, not answered;
- the worker answering with an error status: gone, *answered* (a bug there:
  the attempt is over, the worker lives on).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from tests.bridge_service.conftest import scenario
from vae.bridge_service.config import BridgeSettings, RunSettings
from vae.bridge_service.session.plan import SessionPlan
from vae.bridge_service.workers.convert import accepted_pb
from vae.bridge_service.workers.remote_wire import RemoteAttempt, WorkerGone, open_control
from vae.internal.v1 import worker_pb2_grpc
from vae.recordings.models import Side
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.serving import RunningServer, start_server

SECRET = "s3cret"


class StandIn(worker_pb2_grpc.BridgeWorkerServicer):
    """Accepts the session, then either waits or fails, as the test asks."""

    def __init__(self, fail: bool) -> None:
        self.fail = fail
        self.assigned = asyncio.Event()

    async def RunSession(self, request_iterator: Any, context: Any) -> None:  # type: ignore[override]
        first = await context.read()
        assert first.WhichOneof("message") == "assign"
        await context.write(accepted_pb())
        self.assigned.set()
        if self.fail:
            await context.abort(grpc.StatusCode.INTERNAL, "internal error E0 in RunSession")
        await asyncio.Event().wait()  # until the call is cancelled


@pytest.fixture
async def worker(request: pytest.FixtureRequest) -> AsyncIterator[tuple[StandIn, RunningServer]]:
    servicer = StandIn(fail=getattr(request, "param", False))

    def add(server: grpc.aio.Server) -> None:
        worker_pb2_grpc.add_BridgeWorkerServicer_to_server(servicer, server)

    server = await start_server("127.0.0.1:0", add, ["vae.internal.v1.BridgeWorker"], token=SECRET)
    try:
        yield servicer, server
    finally:
        await server.stop(0)


def plan() -> SessionPlan:
    sc = scenario_from_dict(scenario())
    return SessionPlan("r1", "r1_s1_a1", sc, 1, RunSettings(), BridgeSettings())


async def attempt(server: RunningServer) -> tuple[grpc.aio.Channel, RemoteAttempt]:
    channel, stub = open_control(f"127.0.0.1:{server.port}", SECRET)
    remote = RemoteAttempt(stub, plan(), {Side.USER: "tu", Side.AGENT: "ta"})
    await remote.open(5)
    return channel, remote


async def nothing() -> None:
    return None


async def test_a_channel_closed_under_a_waiting_read_is_the_worker_gone(
    worker: tuple[StandIn, RunningServer],
) -> None:
    channel, remote = await attempt(worker[1])
    waiting = asyncio.create_task(remote.outcome(nothing))
    await channel.close()
    with pytest.raises(WorkerGone) as gone:
        await asyncio.wait_for(waiting, 5)
    assert not gone.value.answered and "channel closed" in str(gone.value)


async def test_a_server_that_goes_away_mid_call_is_the_worker_gone(
    worker: tuple[StandIn, RunningServer],
) -> None:
    channel, remote = await attempt(worker[1])
    waiting = asyncio.create_task(remote.outcome(nothing))
    await worker[1].server.stop(0)
    with pytest.raises(WorkerGone) as gone:
        await asyncio.wait_for(waiting, 5)
    assert not gone.value.answered
    await channel.close()


@pytest.mark.parametrize("worker", [True], indirect=True)
async def test_an_error_status_from_the_worker_is_answered(
    worker: tuple[StandIn, RunningServer],
) -> None:
    channel, remote = await attempt(worker[1])
    with pytest.raises(WorkerGone) as gone:
        await asyncio.wait_for(remote.outcome(nothing), 5)
    assert gone.value.answered and "INTERNAL" in str(gone.value)
    await channel.close()


async def test_a_wrong_secret_is_refused_before_anything_is_assigned(
    worker: tuple[StandIn, RunningServer],
) -> None:
    channel, stub = open_control(f"127.0.0.1:{worker[1].port}", "wrong")
    remote = RemoteAttempt(stub, plan(), {Side.USER: "tu", Side.AGENT: "ta"})
    with pytest.raises(WorkerGone) as gone:
        await remote.open(5)
    assert "UNAUTHENTICATED" in str(gone.value) and not worker[0].assigned.is_set()
    remote.close()
    await channel.close()
