"""Fixtures for the bot tests: a real bridge on loopback and a way to run bots against it.

:func:`run_with_bots` starts a user bot and an agent bot (in-process gRPC
clients, exactly as ``vae bot`` runs them), starts a run of ``scenarios``
through the bridge's StartRun, waits on WatchRun until the run finishes and
stops the bots. The voice is the deterministic buzz unless a test asks for
another synthesiser, so timings do not depend on what is installed.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from vae.bots.brains.scripted import play_script
from vae.bots.client import Brain
from vae.bots.runner import BotConfig, run_bots
from vae.bots.sound.speech import BuzzSynthesiser, Synthesiser
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.config import BridgeSettings
from vae.bridge_service.server import BridgeServer


@pytest.fixture
async def bridge(tmp_path: Path) -> AsyncIterator[BridgeServer]:
    settings = BridgeSettings(address="127.0.0.1:0", wait_timeout_s=30)
    async with BridgeServer(tmp_path / "vae.db", settings) as server:
        yield server


async def run_with_bots(
    server: BridgeServer,
    scenarios: list[dict[str, Any]],
    *,
    user: Callable[[], Brain] = lambda: play_script,
    agent: Callable[[], Brain] = lambda: play_script,
    synth: Synthesiser | None = None,
    timeout_s: float = 45.0,
    roles: tuple[str, ...] = ("user", "agent"),
    **options: Any,
) -> str:
    """Run ``scenarios`` with a user and an agent bot; return the finished run's id.

    ``roles`` limits which bots are started here (another process may play the rest).
    """
    voice = synth or BuzzSynthesiser()
    # Named run + run filter: each test run gets only its own bots, whatever
    # streams an earlier run left behind.
    run_id = f"test-{uuid.uuid4().hex[:8]}"
    stop = asyncio.Event()
    async with asyncio.timeout(timeout_s), asyncio.TaskGroup() as tg:
        for role, brain in (("user", user), ("agent", agent)):
            if role not in roles:
                continue
            config = BotConfig(
                server.address, role, brain, concurrency=len(scenarios), synth=voice,
                run_filter=run_id,
            )  # fmt: skip
            tg.create_task(run_bots(config, stop))
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = bridge_pb2_grpc.BridgeServiceStub(channel)
                request = bridge_pb2.StartRunRequest(
                    run_id=run_id,
                    sources=[bridge_pb2.ScenarioSource(inline=json.dumps(scenarios))],
                    options=bridge_pb2.RunOptions(
                        concurrency=len(scenarios), inactivity_timeout_s=5, **options
                    ),
                )
                await stub.StartRun(request)
                watch = bridge_pb2.WatchRunRequest(run_id=run_id)
                async for event in stub.WatchRun(watch):
                    if event.kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED:
                        break
        finally:
            stop.set()
    return run_id
