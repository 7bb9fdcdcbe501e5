"""`vae run --modality text|audio --clock real|virtual`, and `vae runs show` showing them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from tests.bridge_service.conftest import scenario
from tests.bridge_service.lockstep_bots import StepBot
from tests.helpers import cli
from vae.bridge_service.server import BridgeServer
from vae.cli.main import vae
from vae.cli.runs.run_request import run_options
from vae.common.v1 import common_pb2


def scenario_file(tmp_path: Path, name: str = "chat") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(scenario(name)))
    return path


async def test_a_text_run_on_the_virtual_clock_from_the_command_line(
    bridge: BridgeServer, tmp_path: Path
) -> None:
    path = scenario_file(tmp_path)
    bots = [
        StepBot(bridge.address, common_pb2.ROLE_USER, turns={1: "Hi there."}),
        StepBot(bridge.address, common_pb2.ROLE_AGENT, turns={0: "Hello.", 2: "Bye."}, end_at=2),
    ]
    args = ["run", str(path), "--bridge", bridge.address, "--run-id", "tiers-1", "--json",
            "--modality", "text", "--clock", "virtual"]  # fmt: skip
    (code, out, err), *_ = await asyncio.gather(cli(*args), *(b.run() for b in bots))
    assert code == 0, err
    summary = json.loads(out)
    assert summary["status"] == "completed"
    assert [s["stop_reason"] for s in summary["sessions"]] == ["end_tool"]

    runner = CliRunner()
    shown = runner.invoke(vae, ["runs", "show", "tiers-1", "--db", str(bridge.db_path), "--json"])
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.output)
    assert (doc["modality"], doc["clock"]) == ("text", "virtual")
    (row,) = doc["sessions"]
    assert (row["modality"], row["clock_kind"]) == ("text", "virtual")
    assert row["clock"]["clock"] == "virtual" and row["clock"]["steps"] >= 3
    text = runner.invoke(vae, ["runs", "show", "tiers-1", "--db", str(bridge.db_path)])
    assert "modality: text, clock: virtual" in text.output
    assert "text/virtual" in text.output and "x real time" in text.output


async def test_a_text_run_with_no_clock_given_takes_auto_and_shows_each_sessions_clock(
    bridge: BridgeServer, tmp_path: Path
) -> None:
    path = scenario_file(tmp_path)
    bots = [
        StepBot(bridge.address, common_pb2.ROLE_USER, turns={1: "Hi there."}),
        StepBot(bridge.address, common_pb2.ROLE_AGENT, turns={0: "Hello.", 2: "Bye."}, end_at=2),
    ]
    args = ["run", str(path), "--bridge", bridge.address, "--run-id", "tiers-auto", "--json",
            "--modality", "text"]  # fmt: skip
    (code, _out, err), *_ = await asyncio.gather(cli(*args), *(b.run() for b in bots))
    assert code == 0, err
    assert [b.start.clock for b in bots] == [common_pb2.CLOCK_KIND_VIRTUAL] * 2
    runner = CliRunner()
    shown = runner.invoke(vae, ["runs", "show", "tiers-auto", "--db", str(bridge.db_path)])
    assert shown.exit_code == 0, shown.output
    assert "modality: text, clock: auto" in shown.output, "what the run asked for"
    assert "text/virtual" in shown.output, "what its session took"


async def test_a_tier_the_connector_cannot_serve_exits_2_naming_why(
    bridge: BridgeServer, tmp_path: Path
) -> None:
    path = scenario_file(tmp_path)
    code, _, err = await cli(
        "run", str(path), "--bridge", bridge.address, "--modality", "text",
        "--agent-connector", "twilio+ws://127.0.0.1:9/ws",
    )  # fmt: skip
    assert code == 2, err
    assert "options.modality: the agent side's twilio connector cannot serve" in err
    assert "Twilio Media Streams carries only audio" in err


def test_the_options_become_run_options() -> None:
    base = {name: None for name in (
        "concurrency", "max_duration", "inactivity_timeout", "min_agent_turns", "retry_stale",
        "max_retries", "retry_insufficient", "retry_backoff", "pairing_timeout", "seed",
        "repeat", "share_transcripts", "first_speaker_timeout", "gate_silence", "end_policy",
        "first_speaker", "user_connector", "agent_connector", "connector_kind",
        "connector_capacity", "connect_timeout", "tool_backend",
    )}  # fmt: skip
    base.update(user_connector=(), agent_connector=(), connector_options="{}")
    plain = run_options((), {**base, "modality": None, "clock": None})
    assert not plain.modality and not plain.clock, "unset: the bridge's defaults"
    fast = run_options((), {**base, "modality": "text", "clock": "virtual"})
    assert fast.modality == common_pb2.MODALITY_TEXT
    assert fast.clock == common_pb2.CLOCK_KIND_VIRTUAL
    assert not plain.HasField("tool_backend"), "unset: the scenarios decide"
    tools = run_options((), {**base, "modality": None, "clock": None, "tool_backend": True})
    assert tools.HasField("tool_backend") and tools.tool_backend
    auto = run_options((), {**base, "modality": "audio", "clock": "auto"})
    assert auto.clock == common_pb2.CLOCK_KIND_AUTO


def test_bad_values_and_the_environment() -> None:
    bad = CliRunner().invoke(vae, ["run", "x", "--modality", "video"])
    assert bad.exit_code == 2 and "'video' is not one of 'audio', 'text'" in bad.output
    bad = CliRunner().invoke(vae, ["run", "x", "--clock", "fast"], env={})
    assert bad.exit_code == 2 and "'fast' is not one of 'real', 'virtual'" in bad.output
    env = CliRunner().invoke(vae, ["run", "x"], env={"VAE_CLOCK": "sideways"})
    assert env.exit_code == 2 and "sideways" in env.output
    helped = CliRunner().invoke(vae, ["run", "--help"]).output
    assert "VAE_MODALITY" in helped and "VAE_CLOCK" in helped
    demo = CliRunner().invoke(vae, ["demo", "--help"]).output
    assert "--modality" in demo and "--clock" in demo and "vae demo --clock virtual" in demo
