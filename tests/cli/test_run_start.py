"""Ctrl-C while StartRun is in flight still cancels the run the bridge started."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from bridge_service.server import BridgeServer
from cli.run_start import start_run
from tests.bridge_service.conftest import scenario, watch
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc


async def test_cancel_during_start_run_cancels_the_run(bridge: BridgeServer) -> None:
    request = bridge_pb2.StartRunRequest(
        sources=[bridge_pb2.ScenarioSource(inline=json.dumps(scenario("s1")))],
        options=bridge_pb2.RunOptions(pairing_timeout_s=30),
    )
    started: list[str] = []
    async with grpc.aio.insecure_channel(bridge.address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        task = asyncio.create_task(start_run(stub, request, started))
        await asyncio.sleep(0)  # let the call go out, then "press Ctrl-C"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert len(started) == 1
        events = await watch(stub, started[0])
    assert events[-1].status == bridge_pb2.RUN_STATUS_CANCELLED
    assert f"vae run --resume {started[0]}" in events[-1].message
