"""`vae run`, `vae runs list|show` and `vae bridge serve` from the command line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import scenario
from tests.helpers import cli
from vae.bridge_service.server import BridgeServer
from vae.cli.main import vae
from vae.common.v1 import common_pb2


async def talk(bot: TestBot) -> None:
    await bot.speak(tone(0.3, 16000))
    if bot.role == common_pb2.ROLE_AGENT:
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)


async def test_run_suite_then_inspect(bridge: BridgeServer, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    for name in ("one", "two"):
        (suite / f"{name}.yaml").write_text(yaml.safe_dump(scenario(name)))
    bots = [
        TestBot(bridge.address, role, talk)
        for _ in range(2)
        for role in (common_pb2.ROLE_USER, common_pb2.ROLE_AGENT)
    ]
    (code, out, err), *_ = await asyncio.gather(
        cli(
            "run",
            str(suite),
            "--bridge",
            bridge.address,
            "--run-id",
            "nightly-1",
            "--concurrency",
            "2",
            "--tag",
            "ci",
            "--json",
        ),
        *(b.run() for b in bots),
    )
    assert code == 0, err
    summary = json.loads(out)
    assert summary["run_id"] == "nightly-1" and summary["status"] == "completed"
    assert sorted(s["scenario"] for s in summary["sessions"]) == ["one", "two"]
    assert all(s["stop_reason"] == "end_tool" for s in summary["sessions"])

    runner = CliRunner()
    listed = runner.invoke(vae, ["runs", "list", "--db", str(bridge.db_path), "--json"])
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.output)[0]["run_id"] == "nightly-1"
    assert json.loads(listed.output)[0]["tags"] == "ci"
    shown = runner.invoke(vae, ["runs", "show", "nightly", "--db", str(bridge.db_path)])
    assert shown.exit_code == 0 and "end_tool" in shown.output and "two" in shown.output
    missing = runner.invoke(vae, ["runs", "show", "nope", "--db", str(bridge.db_path)])
    assert missing.exit_code == 2 and "no run matches 'nope'" in missing.output


async def test_failed_run_exits_1_with_table(bridge: BridgeServer, tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario("lonely")))
    code, out, _ = await cli(
        "run",
        str(path),
        "--bridge",
        bridge.address,
        "--pairing-timeout",
        "0.3",
        "--max-retries",
        "0",
    )
    assert code == 1
    assert "lonely" in out and "peer_never_joined" in out and ": failed (0/1 scenarios)" in out


async def test_usage_errors(bridge: BridgeServer, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump({"name": "b", "max_duration": -1}))
    code, _, err = await cli("run", str(broken), "--bridge", bridge.address)
    assert code == 2 and f"{broken}:1:15: max_duration: must be more than 0, got -1" in err
    assert "no run started" in err
    code, _, err = await cli("run", "--bridge", bridge.address)
    assert code == 2 and "give SCENARIOS" in err
    code, _, err = await cli("run", str(broken), "--check")
    assert code == 2 and "--check needs --resume" in err
    code, _, err = await cli("run", "--resume", "nope", "--bridge", bridge.address)
    assert code == 2 and "no run matches" in err


async def test_unreachable_bridge(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario()))
    code, _, err = await cli("run", str(path), "--bridge", "127.0.0.1:9")
    assert code == 1 and "cannot reach the bridge at 127.0.0.1:9" in err


def test_serve_help_and_env() -> None:
    result = CliRunner().invoke(vae, ["bridge", "serve", "--help"])
    assert result.exit_code == 0
    for text in ("VAE_BRIDGE_ADDRESS", "VAE_DB", "VAE_TOKEN", "--tls-cert", "127.0.0.1:50051"):
        assert text in result.output
    mismatch = CliRunner().invoke(vae, ["bridge", "serve", "--tls-cert", __file__])
    assert mismatch.exit_code == 2 and "go together" in mismatch.output
