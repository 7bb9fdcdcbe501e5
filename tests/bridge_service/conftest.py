"""Fixtures for the bridge tests: a real bridge on 127.0.0.1:0 over a real store file."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
import pytest

from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.config import BridgeSettings
from vae.bridge_service.server import BridgeServer

#: Short timings so end conditions happen within a test's patience.
TEST_SETTINGS = BridgeSettings(
    address="127.0.0.1:0",
    wait_timeout_s=10.0,
    end_grace_s=0.3,
    final_state_timeout_s=2.0,
    max_outgoing_frames=25,
)


def scenario(name: str = "s1", **fields: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": name,
        "domain": "test",
        "max_duration": 20,
        "user": {"persona": {"name": "Ann"}, "task": {"goal": "book a table"}},
        "agent": {
            "persona": {"role": "receptionist"},
            "resources": {"tools": {"book": {"name": "who"}}},
        },
        "initial_state": {"bookings": []},
    }
    doc.update(fields)
    return doc


def inline(*docs: dict[str, Any]) -> list[bridge_pb2.ScenarioSource]:
    return [bridge_pb2.ScenarioSource(inline=json.dumps(list(docs)))]


@pytest.fixture
async def bridge(db_path: Path) -> AsyncIterator[BridgeServer]:
    server = BridgeServer(db_path, TEST_SETTINGS)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def make_bridge(db_path: Path) -> AsyncIterator[Any]:
    """Start a bridge with other settings / TLS / token (stopped at teardown)."""
    started: list[BridgeServer] = []

    async def make(**kwargs: Any) -> BridgeServer:
        settings = replace(TEST_SETTINGS, **kwargs.pop("settings", {}))
        server = BridgeServer(kwargs.pop("db", db_path), settings, **kwargs)
        await server.start()
        started.append(server)
        return server

    yield make
    for server in started:
        await server.stop()


@pytest.fixture
async def stub(bridge: BridgeServer) -> AsyncIterator[bridge_pb2_grpc.BridgeServiceStub]:
    async with grpc.aio.insecure_channel(bridge.address) as channel:
        yield bridge_pb2_grpc.BridgeServiceStub(channel)


async def start_run(
    stub: bridge_pb2_grpc.BridgeServiceStub,
    docs: list[dict[str, Any]],
    run_id: str = "",
    **options: Any,
) -> str:
    response = await stub.StartRun(
        bridge_pb2.StartRunRequest(
            sources=inline(*docs), options=bridge_pb2.RunOptions(**options), run_id=run_id
        )
    )
    return response.run.run_id


async def watch(
    stub: bridge_pb2_grpc.BridgeServiceStub, run_id: str, limit_s: float = 30.0
) -> list[bridge_pb2.WatchRunResponse]:
    async def collect() -> list[bridge_pb2.WatchRunResponse]:
        return [e async for e in stub.WatchRun(bridge_pb2.WatchRunRequest(run_id=run_id))]

    return await asyncio.wait_for(collect(), limit_s)


async def run_pair(
    bridge: BridgeServer,
    stub: bridge_pb2_grpc.BridgeServiceStub,
    user: Any,
    agent: Any,
    docs: list[dict[str, Any]] | None = None,
    *,
    user_kwargs: dict[str, Any] | None = None,
    agent_kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> tuple[Any, Any, list[bridge_pb2.WatchRunResponse], str]:
    """One scenario, one user bot, one agent bot; returns what each got, events, run id."""
    from tests.bridge_service.bots import TestBot
    from vae.common.v1 import common_pb2

    options.setdefault("max_auto_retries", 0)
    run_id = await start_run(stub, docs or [scenario()], **options)
    u = TestBot(
        bridge.address, common_pb2.ROLE_USER, user, run_filter=run_id, **(user_kwargs or {})
    )
    a = TestBot(
        bridge.address, common_pb2.ROLE_AGENT, agent, run_filter=run_id, **(agent_kwargs or {})
    )
    got_u, got_a, events = await asyncio.gather(u.run(), a.run(), watch(stub, run_id))
    return got_u, got_a, events, run_id
