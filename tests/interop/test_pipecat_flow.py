"""The pipecat flow of docs/interop.md through the real CLI, at default settings.

A single-client pipecat bot (examples/pipecat_bot, its own venv) as the agent,
the reference user bot, and ``vae run`` at the default concurrency (4): the
sessions queue for the bot and every scenario completes. A pool of two bot
processes serves two sessions at once. An agent expected to greet that only
answers ends the session with ``first_speaker_silent`` in bounded time.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.helpers import free_port
from tests.interop.cli_flows import run_with_users, suite_of
from tests.interop.conftest import PIPECAT_BOT, require_pipecat_venv, subprocess_until_ready
from vae.bridge_service.connectors.base import ConnectorConfig
from vae.bridge_service.connectors.pipecat.connector import dial
from vae.bridge_service.connectors.pool import ConnectorPools
from vae.bridge_service.server import BridgeServer
from vae.recordings.models import Side
from vae.recordings.read.reader import RecordingReader


@contextlib.asynccontextmanager
async def pipecat_bots(tmp_path: Path, n: int) -> AsyncIterator[list[str]]:
    """``n`` example pipecat bot processes on free ports: their ws:// URLs."""
    python = require_pipecat_venv()
    async with contextlib.AsyncExitStack() as stack:
        urls = []
        for i in range(n):
            port = free_port()
            args = [str(python), str(PIPECAT_BOT), "--port", str(port)]
            log = tmp_path / f"pipecat_{i}.log"
            await stack.enter_async_context(subprocess_until_ready(args, "READY", log))
            urls.append(f"ws://127.0.0.1:{port}")
        yield urls


@pytest.fixture
async def one_bot(tmp_path: Path) -> AsyncIterator[str]:
    async with pipecat_bots(tmp_path, 1) as urls:
        yield urls[0]


@pytest.fixture
async def two_bots(tmp_path: Path) -> AsyncIterator[list[str]]:
    async with pipecat_bots(tmp_path, 2) as urls:
        yield urls


def _sessions(db: Path, run_id: str) -> list[tuple[str, str, int, int, str]]:
    with RecordingReader(db) as r:
        return sorted(
            (s.scenario_name, s.stop_reason or "", s.started_ns, s.ended_ns or 0, s.stop_detail)
            for s in r.sessions(run_id)
        )


async def test_documented_command_default_concurrency_single_client_bot(
    bridge: BridgeServer, one_bot: str, tmp_path: Path, db_path: Path
) -> None:
    names = ("restaurant_book_table", "airline_change_flight", "retail_return_item")
    suite = suite_of(tmp_path, *names)
    code, out, err = await run_with_users(
        bridge.address, [str(suite), "--agent-connector", one_bot, "--first-speaker", "user"]
    )
    assert code == 0, err
    run = json.loads(out)
    assert run["status"] == "completed" and run["scenarios_done"] == 3
    sessions = _sessions(db_path, run["run_id"])
    assert [s[0] for s in sessions] == sorted(names)
    assert {s[1] for s in sessions} == {"end_tool"}  # each one completed, first attempt
    spans = sorted((s[2], s[3]) for s in sessions)
    assert all(b[0] >= a[1] for a, b in itertools.pairwise(spans))  # queued


async def test_a_pool_of_two_bot_processes_runs_two_sessions_at_once(
    bridge: BridgeServer, two_bots: list[str], tmp_path: Path, db_path: Path
) -> None:
    suite = suite_of(tmp_path, "restaurant_book_table", "airline_change_flight")
    pool = [arg for url in two_bots for arg in ("--agent-connector", url)]
    code, out, err = await run_with_users(
        bridge.address, [str(suite), *pool, "--first-speaker", "user"], concurrency=2
    )
    assert code == 0, err
    run_id = json.loads(out)["run_id"]
    (a, b) = sorted((s[2], s[3]) for s in _sessions(db_path, run_id))
    assert b[0] < a[1]  # overlapped
    with RecordingReader(db_path) as r:
        endpoints = {s.agent_bot["labels"]["endpoint"] for s in r.sessions(run_id)}
    assert endpoints == set(two_bots)


async def test_agent_expected_to_greet_but_only_answers_ends_in_bounded_time(
    bridge: BridgeServer, one_bot: str, tmp_path: Path, db_path: Path
) -> None:
    suite = suite_of(tmp_path, "restaurant_book_table")  # the agent greets first
    t0 = time.monotonic()
    code, out, _err = await run_with_users(
        bridge.address, [str(suite), "--agent-connector", one_bot, "--first-speaker-timeout", "3"]
    )
    assert time.monotonic() - t0 < 30  # not the 60 s max duration, and not twice
    assert code == 1
    run_id = json.loads(out)["run_id"]
    ((_, reason, _, _, detail),) = _sessions(db_path, run_id)  # one attempt: no retry
    assert reason == "first_speaker_silent"
    assert "--first-speaker user" in detail


async def test_a_refused_connection_is_retried_until_the_bot_is_free(one_bot: str) -> None:
    """A single-client bot busy with someone else refuses; the pool retries, then gets it."""
    refused = asyncio.Event()

    class OnRetry(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "retrying" in record.getMessage():
                refused.set()

    handler = OnRetry()
    logging.getLogger("vae.bridge.connectors").addHandler(handler)
    try:
        holder = await dial(ConnectorConfig("pipecat", one_bot, {}), Side.AGENT)
        # Another bridge process (its own pools) dials the same bot meanwhile.
        config = ConnectorConfig("pipecat", one_bot, {"connect_retries": 1}, connect_timeout_s=30)
        async with asyncio.timeout(40):
            second = asyncio.create_task(ConnectorPools().dial(config, Side.AGENT))
            await refused.wait()  # the bot refused it at least once
            assert not second.done()
            await holder.close()
            endpoint = await second
    finally:
        logging.getLogger("vae.bridge.connectors").removeHandler(handler)
    assert endpoint.bot.labels["endpoint"] == one_bot
    await endpoint.close()
