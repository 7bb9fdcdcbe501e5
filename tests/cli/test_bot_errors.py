"""Errors a bot reports during a call reach `vae run`, `vae runs show`, rescore and report."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import grpc
import yaml

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import scenario
from tests.helpers import cli
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2

HOSTILE = "script line 3: unknown key 'sey' </script><b>x</b>"


async def complain(bot: TestBot) -> None:
    if bot.role == common_pb2.ROLE_USER:
        await bot.event(log=common_pb2.Log(level=common_pb2.LOG_LEVEL_ERROR, message=HOSTILE))
        await bot.event(log=common_pb2.Log(level=common_pb2.LOG_LEVEL_INFO, message="fine"))
    await bot.speak(tone(0.3, 16000))
    if bot.role == common_pb2.ROLE_AGENT:
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)


async def test_bot_errors_are_shown_everywhere(bridge: BridgeServer, tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario("noisy", success_signals=["CLEAN_EXIT"])))
    bots = [
        TestBot(bridge.address, role, complain, run_filter="noisy-run")
        for role in (common_pb2.ROLE_USER, common_pb2.ROLE_AGENT)
    ]
    (code, out, err), *_ = await asyncio.gather(
        cli("run", str(path), "--bridge", bridge.address, "--run-id", "noisy-run"),
        *(b.run() for b in bots),
    )
    assert code == 0, err
    assert f"noisy attempt 1: bot error: user: {HOSTILE}" in out
    assert "fine" not in out
    shown = await cli("runs", "show", "noisy-run", "--db", str(bridge.db_path), "--json")
    (session,) = json.loads(shown[1])["sessions"]
    assert session["bot_errors"] == [f"user: {HOSTILE}"]
    async with grpc.aio.insecure_channel(bridge.address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        listed = await stub.ListRuns(bridge_pb2.ListRunsRequest(prefix="noisy-run"))
        got = await stub.GetRun(bridge_pb2.GetRunRequest(run_id="noisy-run"))
    # a list never reads "no errors" where the run has them
    assert [list(s.bot_errors) for s in listed.runs[0].sessions] == [[f"user: {HOSTILE}"]]
    assert list(got.run.sessions[0].bot_errors) == [f"user: {HOSTILE}"]
    code, out, err = await cli("rescore", "--run", "noisy-run", "--db", str(bridge.db_path))
    assert code == 0, err
    assert f"bot error: user: {HOSTILE}" in out
    report = tmp_path / "r.html"
    code, _, err = await cli("report", "noisy-run", "--db", str(bridge.db_path), "-o", str(report))
    assert code == 0, err
    html = report.read_text()
    assert "unknown key &#x27;sey&#x27; &lt;/script&gt;&lt;b&gt;x&lt;/b&gt;" in html
    assert "</script><b>x</b>" not in html
