"""``vae bot``: usage errors, and a real subprocess bot playing a session."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from click.testing import CliRunner

from tests.bots.conftest import run_with_bots
from vae.bots.brains.llm import END_TOOLS, tool_specs
from vae.bridge_service.config import BridgeSettings
from vae.bridge_service.server import BridgeServer
from vae.cli.main import vae
from vae.recordings.read.reader import RecordingReader

ROOT = Path(__file__).resolve().parents[2]


def test_llm_options_go_together() -> None:
    result = CliRunner().invoke(vae, ["bot", "agent", "--llm-base-url", "http://127.0.0.1:9/v1"])
    assert result.exit_code == 2
    assert "--llm-base-url and --llm-model go together" in result.output
    assert CliRunner().invoke(vae, ["bot", "caller"]).exit_code == 2


def test_asr_is_for_llm_bots_and_needs_a_usable_engine() -> None:
    def run(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(vae, ["bot", "user", *args])
        return result.exit_code, result.output

    llm = ["--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m"]
    code, out = run("--asr", "openai")
    assert code == 2 and "--asr is for LLM bots" in out
    code, out = run(*llm, "--asr", "openai")
    assert code == 2 and "needs a base URL and a model" in out and "--asr-base-url" in out
    code, out = run(*llm, "--asr", "whisperx")
    assert code == 2 and "Invalid value for '--asr'" in out


def test_llm_tools_are_built_from_tools_json_plus_the_end_tool() -> None:
    specs = tool_specs({"book": {"name": "guest name"}}, "user")
    names = [s["function"]["name"] for s in specs]
    assert names == ["book", END_TOOLS["user"]]
    params = specs[0]["function"]["parameters"]
    assert params["properties"]["name"] == {"type": "string", "description": "guest name"}
    assert params["required"] == ["name"]


async def test_vae_bot_subprocess_plays_a_session(bridge: BridgeServer) -> None:
    """The CLI bot (a separate process) is the user; an in-process bot is the agent."""
    scenario = {
        "name": "cli_bot",
        "max_duration": 30,
        "user": {"script": [{"say": "Hello.", "end": True}]},
        "agent": {"script": ["Hi there."]},
        "success_signals": ["CLEAN_EXIT"],
    }
    env = dict(os.environ, VAE_BOT_TTS="buzz")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vae.cli.main", "bot", "user", "--bridge", bridge.address,
        "--sessions", "1", "--log-level", "warning",
        cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        # The in-process helper brings only an agent that joins this run; the
        # subprocess is the only user.
        run_id = await run_with_bots(bridge, [scenario], roles=("agent",))
        async with asyncio.timeout(15):
            _out, err = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    assert b"1 sessions played" in err
    with RecordingReader(bridge.db_path) as reader:
        (session,) = reader.latest_attempts(run_id).values()
    assert session.stop_reason == "user_hang_up"
    assert session.user_bot.get("name") == "vae-scripted-user"


async def test_vae_bot_without_the_bridges_token_fails_clearly(tmp_path: Path) -> None:
    settings = BridgeSettings(address="127.0.0.1:0")
    async with BridgeServer(tmp_path / "vae.db", settings, token="s3cret") as bridge:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "vae.cli.main", "bot", "user", "--bridge", bridge.address,
            "--tts", "buzz", cwd=ROOT, env=dict(os.environ, VAE_TOKEN=""),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        async with asyncio.timeout(15):
            _out, err = await proc.communicate()
    assert proc.returncode == 1
    assert b"UNAUTHENTICATED" in err
