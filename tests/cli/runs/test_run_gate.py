"""`vae run` and `vae demo` with gate options: they gate what they just produced.

`vae run` scores its run on --db (the bridge's database) and gates that
scoring; a bridge it cannot reach is "could not decide" (3), a judge it would
need and does not have is refused before any run (2). `vae demo` gates its
own scoring and links its report.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import yaml
from click.testing import CliRunner
from junitparser import Error, Failure, JUnitXml

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import scenario
from tests.helpers import ROOT, cli, closed_port, untag_expect_fail
from vae.bridge_service.server import BridgeServer
from vae.cli.main import vae
from vae.common.v1 import common_pb2
from vae.recordings.read.reader import RecordingReader


async def talk(bot: TestBot) -> None:
    await bot.speak(tone(0.3, 16000))
    if bot.role == common_pb2.ROLE_AGENT:
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)


def write_suite(folder: Path, **docs: dict[str, object]) -> Path:
    folder.mkdir()
    for name, fields in docs.items():
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(scenario(name, **fields)))
    return folder


def suites(path: Path) -> dict[str, object]:
    return {s.name: s for s in JUnitXml.fromfile(str(path))}


async def test_run_scores_its_run_and_gates_it(bridge: BridgeServer, tmp_path: Path) -> None:
    folder = write_suite(tmp_path / "suite", one={"success_signals": ["CLEAN_EXIT"]},
                         two={"success_signals": ["CLEAN_EXIT"]})  # fmt: skip
    bots = [TestBot(bridge.address, role, talk) for _ in range(2)
            for role in (common_pb2.ROLE_USER, common_pb2.ROLE_AGENT)]  # fmt: skip
    junit = tmp_path / "junit.xml"
    (code, out, err), *_ = await asyncio.gather(
        cli("run", str(folder), "--bridge", bridge.address, "--db", str(bridge.db_path),
            "--run-id", "gated", "--concurrency", "2", "--no-judge", "--min-success", "1.0",
            "--junit-xml", str(junit), "--json"),
        *(b.run() for b in bots),
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)  # one document: the run, with its gate
    assert doc["run_id"] == "gated" and doc["status"] == "completed"
    assert doc["gate"]["status"] == "passed" and doc["gate"]["counts"]["passed"] == 2
    with RecordingReader(bridge.db_path) as reader:
        (scoring,) = reader.scorings("gated")
    assert doc["gate"]["scoring_id"] == scoring.scoring_id
    assert {c.name for c in suites(junit)["test"]} == {"one", "two"}


async def test_run_against_an_unreachable_bridge_could_not_decide(tmp_path: Path) -> None:
    folder = write_suite(tmp_path / "suite", one={"success_signals": ["CLEAN_EXIT"]})
    junit, md = tmp_path / "j.xml", tmp_path / "s.md"
    with closed_port() as port:
        code, out, err = await cli(
            "run", str(folder), "--bridge", f"127.0.0.1:{port}", "--db", str(tmp_path / "v.db"),
            "--min-success", "0.5", "--junit-xml", str(junit), "--summary-md", str(md),
        )  # fmt: skip
    assert code == 3, err
    assert "UNAVAILABLE" in err and "gate: could not decide (exit 3)" in out
    (error,) = next(c for c in suites(junit)["vae gate"] if c.name == "scored").result
    assert isinstance(error, Error) and f"the bridge at 127.0.0.1:{port}" in error.message
    assert md.read_text().startswith("## ⚠️ vae gate: could not decide (exit 3)")


async def test_run_refuses_before_running_what_the_gate_could_not_score(
    bridge: BridgeServer, tmp_path: Path
) -> None:
    folder = write_suite(tmp_path / "suite", judged={"success_signals": ["JUDGE_PASSED"]})
    base = ["run", str(folder), "--bridge", bridge.address, "--db", str(bridge.db_path)]
    code, _, err = await cli(*base, "--min-success", "0.5")
    assert code == 2 and "need a judge" in err
    code, _, err = await cli(*base, "--check", "--resume", "x", "--junit-xml", "j.xml")
    assert code == 2 and "--check runs nothing" in err
    code, _, err = await cli(*base, "--no-judge", "--baseline", "nope")
    assert code == 2 and "--baseline: no run matches 'nope'" in err
    code, _, err = await cli(
        *base, "--judge-base-url", "http://127.0.0.1:9/v1", "--max-unscored", "0"
    )
    assert code == 2 and "a judge base URL needs a judge model" in err
    with RecordingReader(bridge.db_path) as reader:
        assert reader.run_ids() == []  # the bridge was never asked to run


def test_demo_gates_its_own_scoring(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    for name in ("restaurant_book_table", "airline_wrong_date"):
        shutil.copy(ROOT / "examples" / "suite" / f"{name}.yaml", folder)
    # airline_wrong_date is built to fail: tagged, it is an expected failure, left out of the
    # rate (1/1 meets 90%); without its tag it counts as a failure (1/2 is below 90%).
    kept = tmp_path / "kept.xml"
    args = [
        "demo",
        "--db",
        str(tmp_path / "kept.db"),
        "--suite",
        str(folder),
        "--tts",
        "buzz",
        "--clock",
        "virtual",
        "--json",
        "--min-success",
        "0.9",
        "--junit-xml",
        str(kept),
    ]
    tagged = CliRunner().invoke(vae, args, env={"GITHUB_STEP_SUMMARY": None})
    assert tagged.exit_code == 0, tagged.output
    assert json.loads(tagged.stdout)["gate"]["counts"]["xfailed"] == 1
    wrong = next(c for c in suites(kept)["airline"] if c.name == "airline_wrong_date")
    assert wrong.is_passed and wrong.system_out.startswith("expected failure (expect-fail): ")
    untag_expect_fail(folder / "airline_wrong_date.yaml")
    db, junit = tmp_path / "demo.db", tmp_path / "junit.xml"
    args = ["demo", "--db", str(db), "--suite", str(folder), "--tts", "buzz", "--json",
            "--min-success", "0.9", "--junit-xml", str(junit)]  # fmt: skip
    result = CliRunner().invoke(vae, args, env={"GITHUB_STEP_SUMMARY": None})
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["gate"]["scoring_id"] == doc["scoring_id"]
    assert doc["gate"]["links"]["report"] == doc["report"]
    found = suites(junit)
    (failure,) = next(c for c in found["airline"] if c.name == "airline_wrong_date").result
    assert isinstance(failure, Failure) and failure.message.startswith("ACTION_MATCH:")
    assert (
        "below 90.0% by 40.0 points"
        in next(c for c in found["vae gate"] if c.name == "min-success").result[0].message
    )
    refused = CliRunner().invoke(vae, [*args[:5], "--allow-unscored", "--min-success", "0.5"])
    assert refused.exit_code == 2 and "--allow-unscored" in refused.stderr
