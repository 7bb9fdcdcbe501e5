"""Ctrl-C while StartRun is in flight still cancels the run the bridge started,
or says it may still be running when the cancel fails."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import grpc
import pytest

from tests.bridge_service.conftest import scenario, watch
from tests.helpers import closed_port
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.cli.runs.run_start import start_run


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


async def test_a_failed_cancel_is_not_reported_as_cancelled(
    bridge: BridgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """CancelRun fails (its bridge is unreachable): the error surfaces, with a warning."""
    request = bridge_pb2.StartRunRequest(
        sources=[bridge_pb2.ScenarioSource(inline=json.dumps(scenario("s2")))],
        options=bridge_pb2.RunOptions(pairing_timeout_s=30),
    )
    started: list[str] = []
    with closed_port() as port:
        async with (
            grpc.aio.insecure_channel(bridge.address) as channel,
            grpc.aio.insecure_channel(f"127.0.0.1:{port}") as dead,
        ):
            live = bridge_pb2_grpc.BridgeServiceStub(channel)
            # StartRun reaches the bridge; CancelRun goes nowhere.
            stub = SimpleNamespace(
                StartRun=live.StartRun, CancelRun=bridge_pb2_grpc.BridgeServiceStub(dead).CancelRun
            )
            task = asyncio.create_task(start_run(stub, request, started))
            await asyncio.sleep(0)  # let the call go out, then "press Ctrl-C"
            task.cancel()
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await task
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE
            assert len(started) == 1
            run = (await live.GetRun(bridge_pb2.GetRunRequest(run_id=started[0]))).run
            assert run.status == bridge_pb2.RUN_STATUS_RUNNING
            await live.CancelRun(bridge_pb2.CancelRunRequest(run_id=started[0]))
    assert f"warning: run {started[0]} may still be running" in capsys.readouterr().err
