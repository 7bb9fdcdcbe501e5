"""``vae validate``: text output, summary line and exit codes 0 / 1 / 2."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from vae.cli.main import vae

ROOT = Path(__file__).resolve().parents[3]
BROKEN = ROOT / "tests" / "recordings" / "scenarios" / "broken_scenarios"


def test_clean_suite_exits_0_with_a_summary() -> None:
    suite = ROOT / "examples" / "suite"
    result = CliRunner().invoke(vae, ["validate", str(suite)])
    assert result.exit_code == 0
    n = len(list(suite.glob("*.yaml")))  # one scenario per file; the count is the suite's
    assert result.stdout == f"{n} files, {n} valid scenarios: no problems\n"


def test_problems_exit_1_one_line_each_then_the_summary() -> None:
    result = CliRunner().invoke(
        vae, ["validate", str(BROKEN / "typos.yaml"), str(BROKEN / "tools.yaml")]
    )
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[-1] == "2 files, 0 valid scenarios: 9 problems in 2 files"
    assert (
        f"{BROKEN / 'typos.yaml'}:8:7: agent.script[0].sey: unknown field; did you mean 'say'?"
        in lines
    )
    assert all(line.startswith(str(BROKEN)) for line in lines[:-1])


def test_missing_path_exits_2_and_no_argument_is_usage(tmp_path: Path) -> None:
    missing = CliRunner().invoke(vae, ["validate", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "does not exist" in missing.stdout
    assert CliRunner().invoke(vae, ["validate"]).exit_code == 2
