"""The bot's preflight against real health servers on loopback: only SERVING passes."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2

from vae.bots.preflight import SERVICE, BridgeUnusable, check_bridge
from vae.serving import start_server


def _register(_server: grpc.aio.Server) -> None:
    """Only the health service matters to the preflight."""


async def test_a_draining_bridge_does_not_pass_and_a_serving_one_does() -> None:
    running = await start_server("127.0.0.1:0", _register, [SERVICE], token="s3cret")
    address = f"127.0.0.1:{running.port}"
    try:
        # Draining for a shutdown: it answers, but NOT_SERVING.
        await running.health.set(SERVICE, health_pb2.HealthCheckResponse.NOT_SERVING)
        with pytest.raises(BridgeUnusable, match="answers NOT_SERVING") as err:
            await check_bridge(address, token="s3cret", tls_ca=None, tries=2, first_backoff_s=0)
        assert "shutting down" in str(err.value)
        await running.health.set(SERVICE, health_pb2.HealthCheckResponse.SERVING)
        await check_bridge(address, token="s3cret", tls_ca=None, tries=1)
        with pytest.raises(BridgeUnusable, match="UNAUTHENTICATED"):
            await check_bridge(address, token="wrong", tls_ca=None, tries=1)
    finally:
        await running.stop(0)
