"""``vae run --repeat K`` through a real bridge, then pass^k / pass@k from ``vae rescore``.

Trial 3 of each scenario is made to fail (the user hangs up instead of the
agent ending the call, so CLEAN_EXIT fails): with trials pass, pass, fail,
τ²-bench's definitions give pass^k = C(2,k)/C(3,k) -> 2/3, 1/3, 0 and
pass@k = 1 - C(1,k)/C(3,k) -> 2/3, 1, 1.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import scenario
from vae.bridge_service.server import BridgeServer
from vae.cli.main import vae
from vae.common.v1 import common_pb2
from vae.recordings.read.reader import RecordingReader


async def talk(bot: TestBot) -> None:
    await bot.speak(tone(0.3, 16000))
    failing = bot.got.start.trial == 3
    if bot.role == common_pb2.ROLE_AGENT and not failing:
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)
    if bot.role == common_pb2.ROLE_USER and failing:
        await bot.end(common_pb2.END_KIND_USER_HANG_UP)


async def test_repeat_runs_k_trials_and_rescore_reports_pass_hat_k(
    bridge: BridgeServer, tmp_path: Path
) -> None:
    path = tmp_path / "one.yaml"
    path.write_text(yaml.safe_dump(scenario("one", success_signals=["CLEAN_EXIT"])))
    bots = [TestBot(bridge.address, role, talk) for _ in range(3)
            for role in (common_pb2.ROLE_USER, common_pb2.ROLE_AGENT)]  # fmt: skip
    result, *_ = await asyncio.gather(
        asyncio.to_thread(
            CliRunner().invoke, vae,
            ["run", str(path), "--bridge", bridge.address, "--run-id", "rep", "--repeat", "3",
             "--concurrency", "3", "--seed", "7", "--json"],
        ),
        *(b.run() for b in bots),
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    names = sorted(s["scenario"] for s in json.loads(result.stdout)["sessions"])
    assert names == ["one#1", "one#2", "one#3"]
    starts = [b.got.start for b in bots]
    assert sorted(s.trial for s in starts) == [1, 1, 2, 2, 3, 3]
    seeds = {s.trial: s.seed for s in starts}
    assert len(set(seeds.values())) == 3, "each trial has its own seed"
    with RecordingReader(bridge.db_path) as reader:
        run = reader.get_run("rep")
        assert run is not None and run.options["repeat"] == 3

    rescored = await asyncio.to_thread(
        CliRunner().invoke,
        vae, ["rescore", "--run", "rep", "--db", str(bridge.db_path), "--only", "clean_exit",
              "--json"],
    )  # fmt: skip
    assert rescored.exit_code == 0, rescored.output
    summary = json.loads(rescored.stdout)["summary"]
    trials = summary["trials"]["one"]
    assert (trials["trials"], trials["passed"], trials["failed"]) == (3, 2, 1)
    assert summary["pass_hat_k"] == pytest.approx({"1": 2 / 3, "2": 1 / 3, "3": 0.0})
    assert summary["pass_at_k"] == pytest.approx({"1": 2 / 3, "2": 1.0, "3": 1.0})
    assert summary["domains"]["test"]["pass_hat_k"]["2"] == pytest.approx(1 / 3)
    args = ["rescore", "--run", "rep", "--db", str(bridge.db_path), "--only", "clean_exit"]
    text = await asyncio.to_thread(CliRunner().invoke, vae, args)
    assert "pass^2 / pass@2" in text.stdout
    row = r"one \(2/3\)\s+66\.7% / 66\.7%\s+33\.3% / 100\.0%\s+0\.0% / 100\.0%"
    assert re.search(row, text.stdout)


async def test_a_scenario_named_like_a_trial_is_refused_with_repeat(
    bridge: BridgeServer, tmp_path: Path
) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text(yaml.safe_dump(scenario("odd#2")))
    result = await asyncio.to_thread(
        CliRunner().invoke, vae, ["run", str(path), "--bridge", bridge.address, "--repeat", "2"]
    )
    assert result.exit_code == 2 and "names repeated trials" in result.stderr


def test_repeat_cannot_change_a_resumed_run() -> None:
    result = CliRunner().invoke(vae, ["run", "--resume", "rep", "--repeat", "2"])
    assert result.exit_code == 2 and "--repeat cannot change a resumed run" in result.stderr
