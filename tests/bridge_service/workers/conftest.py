"""Fixtures for the worker tests: a front door with two real worker processes.

The front door runs in the test's process (so a test can reach its pool and
run manager); its workers are real processes (``python -m
vae.bridge_service.workers.main``) serving real gRPC on loopback and writing the
same SQLite file. At teardown every worker process the front door ever
started must be gone.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.bridge_service.bots import TestBot, fmt
from tests.bridge_service.conftest import TEST_SETTINGS
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2

USER, AGENT = common_pb2.ROLE_USER, common_pb2.ROLE_AGENT
SETTINGS = replace(TEST_SETTINGS, wait_timeout_s=30.0, final_state_timeout_s=3.0)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def worker_pids(server: BridgeServer) -> list[int]:
    assert server.workers is not None
    return [w.pid for w in server.workers.workers]


@pytest.fixture
async def front_door(db_path: Path) -> AsyncIterator[BridgeServer]:
    server = BridgeServer(db_path, SETTINGS, workers=2)
    await server.start()
    seen: set[int] = set(worker_pids(server))
    try:
        yield server
    finally:
        if server.workers is not None:
            seen.update(worker_pids(server))
        await server.stop()
    assert not [pid for pid in seen if alive(pid)], "a worker outlived its front door"


@pytest.fixture
async def stub(front_door: BridgeServer) -> AsyncIterator[bridge_pb2_grpc.BridgeServiceStub]:
    async with grpc.aio.insecure_channel(front_door.address) as channel:
        yield bridge_pb2_grpc.BridgeServiceStub(channel)


def join(
    role: int, *, redirect: bool = False, ticket: str = "", run_filter: str = "", name: str = "t"
) -> bridge_pb2.BotMessage:
    return bridge_pb2.BotMessage(
        join=bridge_pb2.Join(
            role=role,  # type: ignore[arg-type]
            bot=common_pb2.BotInfo(name=name, version="1"),
            send_format=fmt(16000),
            receive_format=fmt(16000),
            run_filter=run_filter,
            accepts_redirect=redirect,
            ticket=ticket,
        )
    )


def at_worker(bot: TestBot, behaviour: Any = None) -> TestBot:
    """The bot that follows ``bot``'s Redirect: same role, the worker's port, the ticket."""
    redirect = bot.got.redirect
    assert redirect is not None, "no Redirect received"
    host = bot.address.rsplit(":", 1)[0]
    return TestBot(
        f"{host}:{redirect.port}",
        bot.role,
        behaviour,
        name=bot.name,
        join=join(bot.role, ticket=redirect.ticket, name=bot.name),
    )
