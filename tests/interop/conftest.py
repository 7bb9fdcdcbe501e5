"""Fixtures for the interoperability tests: real bridge and scorer servers on
loopback over one store file, the pipecat venv, subprocess bots.

Tools outside Python (node, the pipecat venv) are required the way
``tests.conftest.require_tool`` requires them: missing locally, the test is
skipped with the command that installs it; missing in CI (``CI`` set), it fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.helpers import free_port
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.config import BridgeSettings
from vae.bridge_service.server import BridgeServer
from vae.scorer_service.edge.server import start_scorer
from vae.serving import RunningServer

ROOT = Path(__file__).resolve().parents[2]
PIPECAT_PYTHON = ROOT / ".pipecat-venv" / "bin" / "python"
PIPECAT_BOT = ROOT / "examples" / "pipecat_bot" / "bot.py"
NODE_DIR = ROOT / "examples" / "node"

SETTINGS = BridgeSettings(
    address="127.0.0.1:0", wait_timeout_s=30.0, end_grace_s=0.3, final_state_timeout_s=5.0
)


def require_path(path: Path, install_hint: str) -> Path:
    """``path`` if it exists; else skip (locally) or fail (CI) naming the fix."""
    if path.exists():
        return path
    message = f"{path} not found; create it with: {install_hint}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def require_pipecat_venv() -> Path:
    return require_path(PIPECAT_PYTHON, "scripts/setup_pipecat_env.sh")


@pytest.fixture
async def bridge(db_path: Path) -> AsyncIterator[BridgeServer]:
    server = BridgeServer(db_path, SETTINGS)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def scorer(db_path: Path) -> AsyncIterator[RunningServer]:
    server = await start_scorer(db_path, "127.0.0.1:0")
    try:
        yield server
    finally:
        await server.stop(1.0)


@pytest.fixture
async def bridge_stub(bridge: BridgeServer) -> AsyncIterator[bridge_pb2_grpc.BridgeServiceStub]:
    async with grpc.aio.insecure_channel(bridge.address) as channel:
        yield bridge_pb2_grpc.BridgeServiceStub(channel)


async def start_run(
    stub: bridge_pb2_grpc.BridgeServiceStub, docs: list[dict[str, Any]], **options: Any
) -> str:
    options.setdefault("max_auto_retries", 0)
    request = bridge_pb2.StartRunRequest(
        sources=[bridge_pb2.ScenarioSource(inline=json.dumps(docs))],
        options=bridge_pb2.RunOptions(**options),
    )
    return str((await stub.StartRun(request)).run.run_id)


async def watch_until_done(
    stub: bridge_pb2_grpc.BridgeServiceStub, run_id: str
) -> list[bridge_pb2.WatchRunResponse]:
    """Every progress event of the run, returning when it finishes (callers bound the wait)."""
    request = bridge_pb2.WatchRunRequest(run_id=run_id)
    return [event async for event in stub.WatchRun(request)]


@contextlib.asynccontextmanager
async def subprocess_until_ready(
    args: list[str], ready: str, log: Path, *, ready_within_s: float = 90.0, cwd: Path = ROOT
) -> AsyncIterator[asyncio.subprocess.Process]:
    """Start ``args``; yield once a stdout line starts with ``ready``; stop it after."""
    with log.open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            *args, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=err
        )
        try:
            assert proc.stdout is not None

            async def wait_ready() -> None:
                assert proc.stdout is not None
                while line := await proc.stdout.readline():
                    if line.decode().startswith(ready):
                        return
                raise AssertionError(f"{args[1]} exited before {ready!r}; see {log}")

            await asyncio.wait_for(wait_ready(), ready_within_s)
            yield proc
        finally:
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 10)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()


@pytest.fixture
async def pipecat_bot_process(
    tmp_path: Path,
) -> AsyncIterator[tuple[str, asyncio.subprocess.Process]]:
    """The example pipecat bot (from the pipecat venv) on a free port: (ws:// URL, process)."""
    python = require_pipecat_venv()
    port = free_port()
    args = [str(python), str(PIPECAT_BOT), "--port", str(port)]
    async with subprocess_until_ready(args, "READY", tmp_path / "pipecat_bot.log") as proc:
        yield f"ws://127.0.0.1:{port}", proc


@pytest.fixture
def pipecat_bot(pipecat_bot_process: tuple[str, asyncio.subprocess.Process]) -> str:
    return pipecat_bot_process[0]
