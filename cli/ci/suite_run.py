"""Run chosen scenarios as one vae run and score it: what the pytest plugin does at session start.

Why a module: the plugin (``cli/ci/pytest_plugin.py``) must import nothing heavy
when pytest loads it, so everything that needs grpc, the services or the
bots lives here and is imported only when ``--vae-suite`` is given. Two ways
to run, as ``vae demo`` and ``vae run``:

- in-process (the default): the bridge on a loopback port recording into the
  database, the scripted reference bots for each side that has no connector,
  and — unless a judge is configured — the rule-based stand-in judge on
  loopback, with ``vae demo``'s run options (:data:`IN_PROCESS_DEFAULTS`);
- a running bridge (``--vae-bridge ADDR``): only the run is started there;
  the bots (or connectors) are the user's, and the database must be the one
  that bridge records into, since the run is scored there.

Either way the run is scored in-process on the database (a new scoring, the
run's current one) so it can be reported, gated and rescored like any other.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bots.sound.speech import default_synthesiser
from vae.bots.stand_in.offline_judge import MODEL as STAND_IN_MODEL
from vae.bots.stand_in.offline_judge import offline_judge_server
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.config import BridgeSettings
from vae.bridge_service.server import BridgeServer
from vae.cli.runs.run_client import STATUS
from vae.cli.runs.run_start import start_run
from vae.scorer_service.config import JudgeSettings, ScoringConfig
from vae.scorer_service.scoring.rescore import rescore
from vae.serving import client_channel

#: ``vae demo``'s run options (cli/demo/demo_wire.py), for the in-process run's unset options.
IN_PROCESS_DEFAULTS: dict[str, Any] = {
    "concurrency": 6,
    "inactivity_timeout": 4.0,
    "min_agent_turns": 2,
    "max_retries": 1,
    "retry_backoff": 0.5,
    "pairing_timeout": 30.0,
    "seed": 7,
}


@dataclass(frozen=True)
class Where:
    """Where the run goes: a running bridge (``address``) or an in-process one (empty)."""

    db_path: Path
    address: str = ""
    token: str | None = None
    tls_ca: Path | None = None
    tts: str = "auto"


@dataclass(frozen=True)
class Judge:
    base_url: str = ""
    model: str = ""
    api_key: str = ""
    no_judge: bool = False

    @property
    def configured(self) -> bool:
        return bool(self.base_url)


@dataclass(frozen=True)
class SuiteRun:
    run_id: str
    status: str
    error: str
    scoring_id: str


async def _drive(channel: Any, request: bridge_pb2.StartRunRequest, started: list[str]) -> Any:
    """Start the run and follow it to its end; the run as the bridge then has it."""
    stub: bridge_pb2_grpc.BridgeServiceAsyncStub = bridge_pb2_grpc.BridgeServiceStub(channel)
    run = (await start_run(stub, request, started)).run
    try:
        async for event in stub.WatchRun(bridge_pb2.WatchRunRequest(run_id=run.run_id)):
            if event.kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED:
                break
    except asyncio.CancelledError:
        await stub.CancelRun(bridge_pb2.CancelRunRequest(run_id=run.run_id))
        raise
    return (await stub.GetRun(bridge_pb2.GetRunRequest(run_id=run.run_id))).run


async def _in_process(where: Where, request: bridge_pb2.StartRunRequest, started: list[str]) -> Any:
    synth = await asyncio.to_thread(default_synthesiser, where.tts)
    options = request.options
    roles = [r for r in ("user", "agent") if not getattr(options, f"{r}_connector").url]
    async with BridgeServer(where.db_path, BridgeSettings(address="127.0.0.1:0")) as bridge:
        stop = asyncio.Event()
        async with asyncio.TaskGroup() as tg:
            for role in roles:
                config = BotConfig(
                    bridge.address, role, lambda: play_script, synth=synth,
                    concurrency=max(1, options.concurrency), name=f"vae-scripted-{role}",
                    version="1",
                )  # fmt: skip
                tg.create_task(run_bots(config, stop))
            try:
                async with client_channel(bridge.address) as channel:
                    return await _drive(channel, request, started)
            finally:
                stop.set()


async def _remote(where: Where, request: bridge_pb2.StartRunRequest, started: list[str]) -> Any:
    async with client_channel(where.address, token=where.token, tls_ca=where.tls_ca) as channel:
        return await _drive(channel, request, started)


@contextlib.contextmanager
def _judge_settings(where: Where, judge: Judge) -> Iterator[ScoringConfig]:
    """The scoring config: the configured judge, none (``no_judge``), or the stand-in."""
    if judge.configured or judge.no_judge or where.address:
        settings = JudgeSettings(base_url=judge.base_url, model=judge.model,
                                 api_key=judge.api_key)  # fmt: skip
        yield ScoringConfig(judge=settings, no_judge=judge.no_judge, label="pytest --vae-suite")
        return
    with offline_judge_server() as server:
        settings = JudgeSettings(base_url=server.base_url, model=STAND_IN_MODEL,
                                 api_key="offline")  # fmt: skip
        yield ScoringConfig(judge=settings, label="pytest --vae-suite (stand-in judge)")


def require_judge(where: Where, judge: Judge, scenarios: list[Any]) -> None:
    """Refuse (``JudgeRequiredError``) scenarios needing a judge when none will be there:
    a running bridge with no judge configured and no ``no_judge``."""
    from vae.scorer_service.judge.need import require_judge as require

    if where.address and not judge.configured:
        require(ScoringConfig(no_judge=judge.no_judge), scenarios)


def run_suite(where: Where, request: bridge_pb2.StartRunRequest) -> SuiteRun:
    """Run ``request`` (in-process, or on ``where.address``) to its end; not yet scored.

    Raises ``grpc.aio.AioRpcError`` when the bridge refuses or cannot be reached.
    """
    started: list[str] = []
    drive = _remote if where.address else _in_process
    run = asyncio.run(drive(where, request, started))
    return SuiteRun(run.run_id, STATUS.get(run.status, ""), run.error, "")


def score_suite(where: Where, judge: Judge, run_id: str) -> str:
    """Score the run on the database (a new scoring, its current one); the scoring id.

    Raises the rescore's errors (a judge that cannot be used, a store that fails).
    """
    with _judge_settings(where, judge) as config:
        result = asyncio.run(rescore(where.db_path, run_id, config))
    return result.scoring.scoring_id
