"""TLS and bearer token: missing or wrong token refused, the right one accepted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.tls import self_signed
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.serving import TlsFiles, client_channel


async def list_runs(channel: grpc.aio.Channel) -> Any:
    return await bridge_pb2_grpc.BridgeServiceStub(channel).ListRuns(bridge_pb2.ListRunsRequest())


async def test_token(make_bridge: Any) -> None:
    server = await make_bridge(token="s3cret")
    for token in (None, "wrong"):
        async with client_channel(server.address, token=token) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as exc:
                await list_runs(channel)
            assert exc.value.code() == grpc.StatusCode.UNAUTHENTICATED
            # Converse is guarded too: a bot without the token never joins.
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            call = stub.Converse(iter([bridge_pb2.BotMessage(join=bridge_pb2.Join(role=1))]))
            with pytest.raises(grpc.aio.AioRpcError) as exc:
                await call.read()
            assert exc.value.code() == grpc.StatusCode.UNAUTHENTICATED
    async with client_channel(server.address, token="s3cret") as channel:
        assert (await list_runs(channel)).runs == []
    assert server.pool.waiting() == 0


async def test_tls(make_bridge: Any, tmp_path: Path) -> None:
    files = TlsFiles(*self_signed(tmp_path))
    server = await make_bridge(tls=files, settings={"address": "localhost:0"})
    async with client_channel(f"localhost:{server.port}", tls_ca=files.cert) as channel:
        assert (await list_runs(channel)).runs == []
    async with grpc.aio.insecure_channel(f"localhost:{server.port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await list_runs(channel)
        assert exc.value.code() == grpc.StatusCode.UNAVAILABLE


def test_binds_loopback_by_default() -> None:
    from vae.bridge_service.config import BridgeSettings

    assert BridgeSettings().address.startswith("127.0.0.1:")


async def test_health_and_reflection(make_bridge: Any) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    server = await make_bridge()
    async with grpc.aio.insecure_channel(server.address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        reply = await health.Check(
            health_pb2.HealthCheckRequest(service="vae.bridge.v1.BridgeService")
        )
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        reflect = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        async for answer in reflect.ServerReflectionInfo(iter([request])):
            names = {s.name for s in answer.list_services_response.service}
            assert "vae.bridge.v1.BridgeService" in names
            break
