"""The NeMo import rows of the failure table: crashed, killed, wrong types, symlinks."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from tests.cli.honest_common import IMPORTED
from tests.helpers import cli
from tests.interop import nemo_fixture as fx
from vae.recordings.read.reader import RecordingReader


def results(tmp_path: Path) -> Path:
    return fx.build(tmp_path / "nemo")


async def import_and_rescore(
    tmp_path: Path, root: Path, *, expect_rescore: int = 1
) -> tuple[str, dict[str, Any]]:
    db = tmp_path / "import.db"
    code, out, err = await cli("import", "nemo", str(root), "--db", str(db))
    assert code == 0, err
    code, scored, err = await cli(
        "rescore", "--run", IMPORTED, "--db", str(db), "--no-judge", "--json"
    )
    assert code == expect_rescore, err
    return out, json.loads(scored)


def success_of(data: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {
        s["scenario_name"]: (v["verdict"], v["error"])
        for s in data["sessions"]
        for v in s["scores"]
        if v["signal"] == "is_successful"
    }


async def row_import_crashed(tmp_path: Path) -> None:
    out, data = await import_and_rescore(tmp_path, results(tmp_path))
    assert f"{fx.CRASHED}: #1 crashed" in out
    assert "crashed or unfinished" in out and "run: " in out
    assert success_of(data)[fx.CRASHED] == ("unscored", "unfinished: attempt_crashed")
    with RecordingReader(tmp_path / "import.db") as reader:
        run = reader.get_run(IMPORTED)
        assert run is not None and run.status == "failed"


async def row_import_killed(tmp_path: Path) -> None:
    root = results(tmp_path)
    # The pizza attempt would pass on its own, but it was killed mid-call.
    (root / fx.PIZZA / "__KILLED__").write_text("")
    out, data = await import_and_rescore(tmp_path, root)
    assert f"{fx.PIZZA}: #1 crashed" in out and "killed" in out
    assert success_of(data)[fx.PIZZA] == ("unscored", "unfinished: attempt_crashed")
    assert "passed" not in {v for v, _ in success_of(data).values()}


async def row_import_wrong_types(tmp_path: Path) -> None:
    root = results(tmp_path)
    metrics_path = root / fx.PIZZA / "metrics.json"
    metrics = json.loads(metrics_path.read_text())
    metrics.update(stop_reason=42, clean_exit="yes", judge_score="high", judge_passed=True)
    metrics_path.write_text(json.dumps(metrics))
    db = tmp_path / "import.db"
    code, out, err = await cli("import", "nemo", str(root), "--db", str(db))
    assert code == 0, err
    assert "metrics.json: stop_reason: expected a string, got int 42; ignored" in out
    assert "metrics.json: clean_exit: expected a boolean, got str 'yes'; ignored" in out
    assert "metrics.json: judge_score: expected a number, got str 'high'; ignored" in out
    with RecordingReader(db) as reader:
        session = reader.session(f"{IMPORTED}_{fx.PIZZA}_a1")
        assert session is not None and session.stop_reason != "bot_error"
        original = next(s for s in reader.scorings(IMPORTED))
        judged = [
            s for s in reader.scores(original.scoring_id, session.session_id)
            if s.signal == "JUDGE_PASSED"
        ]  # fmt: skip
        assert [s.value for s in judged] == [None]  # "high" never became a score


async def row_import_symlinks(tmp_path: Path) -> None:
    root = results(tmp_path)
    pizza = root / fx.PIZZA
    (pizza / "metrics.json").unlink()
    (pizza / "metrics.json").symlink_to("metrics.json")  # a loop onto itself
    context = pizza / "bot_logs_agent" / "llm_context.json"
    context.unlink(missing_ok=True)
    context.symlink_to("nowhere.json")  # dangling
    (pizza / "final_agent_response.json").unlink(missing_ok=True)
    (pizza / "final_agent_response.json").symlink_to("/dev/zero")  # leaves the directory
    os.mkfifo(pizza / "bridge_log.txt")  # a special file: reading it would hang
    outside = tmp_path / "elsewhere" / "stolen"
    outside.mkdir(parents=True)
    (outside / "metrics.json").write_text("{}")
    (root / "stolen").symlink_to(outside)  # a scenario directory outside the run
    (pizza / "bot_logs_user").rename(tmp_path / "elsewhere" / "logs")
    (pizza / "bot_logs_user").symlink_to(tmp_path / "elsewhere" / "logs")  # a parent dir
    out, data = await asyncio.wait_for(import_and_rescore(tmp_path, root), 60)
    for expected in (
        f"{fx.PIZZA}/metrics.json: symlink loop; not followed",
        f"{fx.PIZZA}/bot_logs_agent/llm_context.json: dangling symlink; not followed",
        f"{fx.PIZZA}/final_agent_response.json: symlink leaves the run directory; not followed",
        f"{fx.PIZZA}/bridge_log.txt: not a regular file (special file); not read",
        f"{fx.PIZZA}/bot_logs_user/llm_context.json: symlink leaves the run directory",
        "stolen: a symlinked directory; not followed",
    ):
        assert expected in out
    assert "stolen" not in {s["scenario_name"] for s in data["sessions"]}
    # Without its metrics the attempt cannot be known to have finished.
    assert success_of(data)[fx.PIZZA] == ("unscored", "unfinished: attempt_crashed")
