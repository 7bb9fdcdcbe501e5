"""Bad input to ``vae load``: a clear error naming what is wrong, exit 2, nothing started.

Every case is refused before a bridge, a bot or the store exists: the
database file is never created, no traceback is shown.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.cli.load.runs import SUITE
from tests.helpers import ROOT
from vae.cli.main import vae

CASES = [
    (["--steps", ""], "--steps", "give at least one level"),
    (["--steps", " , "], "--steps", "give at least one level"),
    (["--steps", "1,5,3"], "--steps", "levels must increase: 3 comes after 5"),
    (["--steps", "2,2"], "--steps", "levels must increase: 2 comes after 2"),
    (["--steps", "0,1,2"], "--steps", "0 is not a level"),
    (["--steps", "1,two"], "--steps", "'two' is not a whole number"),
    (["--steps", "1,-2"], "--steps", "'-2' is not a whole number"),
    (["--calls", "0"], "--calls", "a step runs at least one call"),
    (["--steps", "1,4", "--calls", "3"], "--calls", "3 calls cannot fill step 4"),
    (["--calls", "20", "--step-duration", "10s"], "", "either --calls N or --step-duration"),
    (["--step-duration", "soon"], "--step-duration", "'soon' is not a duration"),
    (["--step-duration", "0s"], "--step-duration", "must be longer than 0"),
    (["--ramp-up", "x"], "--ramp-up", "is not a duration"),
    (["--soak", "30s"], "", "--soak needs --concurrency N"),
    (["--concurrency", "3"], "", "--concurrency is the level a soak holds"),
    (["--soak", "1m", "--concurrency", "2", "--steps", "1,2"], "", "cannot be combined"),
    (["--soak", "1m", "--concurrency", "2", "--window", "2m"], "--window", "longer than the soak"),
    (["--soak", "1m", "--concurrency", "2", "--min-concurrency", "2"], "", "judge steps"),
    (["--window", "5s"], "", "--window cuts a soak"),
    (["--max-drop", "2"], "--max-drop", "between 0 and 1"),
    (["--max-drop", "lots"], "--max-drop", "is not a fraction"),
    (["--max-p95", "fast"], "--max-p95", "is not a duration"),
    (["--bridge", "127.0.0.1:1", "--workers", "2"], "", "--workers sizes the bridge"),
    (["--bridge", "127.0.0.1:1", "--agent-capacity", "3"], "", "vae bot agent --capacity"),
    (
        ["--agent-connector", "ws://127.0.0.1:1", "--agent-capacity", "3"],
        "",
        "--agent-connector names another agent",
    ),
    (["--connector-options", "{nope"], "--connector-options", ""),
]


@pytest.mark.parametrize(("args", "option", "why"), CASES)
def test_bad_input_is_refused_before_anything_starts(
    tmp_path: Path, args: list[str], option: str, why: str
) -> None:
    db = tmp_path / "load.db"
    result = CliRunner().invoke(vae, ["load", str(SUITE), "--db", str(db), *args])
    assert result.exit_code == 2, result.output
    assert option in result.stderr and why in result.stderr, result.stderr
    assert "Traceback" not in result.output
    assert not db.exists()


def test_a_suite_that_needs_a_judge_is_refused_without_one(tmp_path: Path) -> None:
    db = tmp_path / "load.db"
    nl = ROOT / "examples" / "suite" / "retail_return_item.yaml"
    result = CliRunner().invoke(vae, ["load", str(nl), "--db", str(db)])
    assert result.exit_code == 2, result.output
    assert "judge" in result.stderr and "retail_return_item" in result.stderr
    assert not db.exists()


def test_a_broken_scenario_is_refused_naming_its_problem(tmp_path: Path) -> None:
    db, broken = tmp_path / "load.db", tmp_path / "broken.yaml"
    broken.write_text("name: broken\nuser: {script: 7}\n")
    result = CliRunner().invoke(vae, ["load", str(broken), "--db", str(db)])
    assert result.exit_code == 2, result.output
    assert "broken.yaml" in result.stderr and "no run started" in result.stderr
    assert not db.exists()


def test_the_help_shows_the_options_and_examples() -> None:
    result = CliRunner().invoke(vae, ["load", "--help"])
    assert result.exit_code == 0
    for text in ("--steps", "--calls", "--step-duration", "--ramp-up", "--soak", "--max-p95",
                 "--max-drop", "--min-concurrency", "--workers", "--agent-capacity", "--report",
                 "vae load examples/load --agent-capacity 3"):  # fmt: skip
        assert text in result.stdout, text
