"""Serving plumbing: health, reflection, bearer token, TLS, on real loopback servers."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tests.tls import self_signed
from vae.serving import TlsFiles, client_channel, start_server

SERVICE = "vae.test.Nothing"


def _register(_server: grpc.aio.Server) -> None:
    """No servicer of our own: health and reflection are what is tested here."""


async def _check(channel: grpc.aio.Channel) -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    reply = await stub.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=5)
    return int(reply.status)


async def _list_services(channel: grpc.aio.Channel) -> set[str]:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    call = stub.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")])
    )
    names: set[str] = set()
    async for reply in call:
        names = {s.name for s in reply.list_services_response.service}
    return names


async def test_health_and_reflection() -> None:
    running = await start_server("127.0.0.1:0", _register, [SERVICE])
    try:
        async with client_channel(f"127.0.0.1:{running.port}") as channel:
            assert await _check(channel) == health_pb2.HealthCheckResponse.SERVING
            names = await _list_services(channel)
            assert {SERVICE, "grpc.health.v1.Health"} <= names
    finally:
        await running.stop(0)


async def test_token_is_required_when_set() -> None:
    running = await start_server("127.0.0.1:0", _register, [SERVICE], token="s3cret")
    address = f"127.0.0.1:{running.port}"
    try:
        for token in (None, "wrong"):
            async with client_channel(address, token=token) as channel:
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await _check(channel)
                assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        async with client_channel(address, token="s3cret") as channel:
            assert await _check(channel) == health_pb2.HealthCheckResponse.SERVING
            # streaming calls carry the token too (reflection is stream-stream)
            assert SERVICE in await _list_services(channel)
        async with client_channel(address) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await _list_services(channel)
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        await running.stop(0)


async def test_tls(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    running = await start_server("127.0.0.1:0", _register, [SERVICE], tls=TlsFiles(cert, key))
    try:
        async with client_channel(f"localhost:{running.port}", tls_ca=cert) as channel:
            assert await _check(channel) == health_pb2.HealthCheckResponse.SERVING
        async with client_channel(f"127.0.0.1:{running.port}") as plain:
            with pytest.raises(grpc.aio.AioRpcError):
                await _check(plain)
    finally:
        await running.stop(0)
