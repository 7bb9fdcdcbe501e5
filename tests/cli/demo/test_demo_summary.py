"""`vae demo` ends as `vae gate` without a threshold decides: every scenario as built.

The whole example suite, on the virtual clock with the buzz voice (seconds,
the same verdicts as real time: test_demo_tiers.py). Its scenarios built to
fail carry the `expect-fail` tag, so the demo exits 0 with them as expected
failures, and `vae gate` on its run exits 0 — with a JUnit file where each
expected failure is a passing test case that says so, a Markdown scorecard,
a report and `vae runs show` that agree. A copy of the suite with one tag
removed (a user who forgot it) makes both exit 1, naming that scenario.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from junitparser import Failure, JUnitXml

from tests.helpers import EXAMPLE_SUITE, copy_example_suite, example_expectations
from vae.cli.main import vae
from vae.recordings.read.reader import RecordingReader

FAST = ("--clock", "virtual", "--tts", "buzz", "--concurrency", "8")
NO_STEP = {"GITHUB_STEP_SUMMARY": None}


def invoke(*args: str) -> Result:
    return CliRunner().invoke(vae, list(args), env=NO_STEP)


def demo(db: Path, suite: Path, *extra: str) -> tuple[Result, dict[str, Any]]:
    result = invoke("demo", "--db", str(db), "--suite", str(suite), *FAST, "--json", *extra)
    doc: dict[str, Any] = json.loads(result.stdout)
    assert doc["run_status"] == "completed", doc["run_error"]
    return result, doc


def test_the_example_suite_passes_with_its_expected_failures_and_so_does_its_gate(
    tmp_path: Path,
) -> None:
    built = example_expectations()
    failing = sorted(n for n, b in built.items() if b)
    assert len(failing) >= 5, "the example suite keeps its scenarios built to fail"
    db = tmp_path / "demo.db"
    result = invoke("demo", "--db", str(db), "--suite", str(EXAMPLE_SUITE), *FAST)
    assert result.exit_code == 0, result.output
    assert (f"gate (no thresholds): passed — no scenario failed unexpectedly: "
            f"{len(built) - len(failing)} passed, {len(failing)} failed as expected "
            "(expect-fail)") in result.stdout  # fmt: skip
    for name, expected_to_fail in built.items():  # the summary's result column
        word = "expected failure" if expected_to_fail else "passed"
        assert re.search(rf"^  {word} +{name}( |$)", result.stdout, re.MULTILINE), name
    with RecordingReader(db) as reader:
        (run,) = reader.run_ids()

    junit, md = tmp_path / "junit.xml", tmp_path / "gate.md"
    gated = invoke("gate", run, "--db", str(db), "--junit-xml", str(junit), "--summary-md", str(md))
    assert gated.exit_code == 0, gated.output
    assert gated.stdout.startswith("gate: passed (exit 0)")
    cases = {c.name: c for suite in JUnitXml.fromfile(str(junit)) for c in suite}
    for name in failing:  # a passing test case that says it failed as expected
        assert cases[name].is_passed, name
        assert cases[name].system_out.startswith("expected failure (expect-fail): "), name
    summary = md.read_text()
    assert summary.startswith("## ✅ vae gate: passed (exit 0)")
    assert f"### Expected failures (built to fail) ({len(failing)})" in summary
    assert "### Failing scenarios" not in summary

    shown = invoke("runs", "show", run, "--db", str(db), "--json")
    sessions = {s["scenario"]: s for s in json.loads(shown.stdout)["sessions"]}
    assert {n: s["outcome"] for n, s in sessions.items()} == {
        n: "xfailed" if b else "passed" for n, b in built.items()
    }
    assert json.loads(shown.stdout)["gate"]["status"] == "passed"
    report = Path(result.stdout.split("\nreport   ")[1].split("\n")[0]).read_text()
    assert "Per-scenario rule (<code>vae gate</code> without a threshold): kept" in report


def test_one_tag_removed_makes_the_demo_and_the_gate_fail_naming_it(tmp_path: Path) -> None:
    forgot = sorted(n for n, b in example_expectations().items() if b)[-1]
    suite = copy_example_suite(tmp_path / "suite", untag=forgot)
    db = tmp_path / "demo.db"
    result, doc = demo(db, suite)
    assert result.exit_code == 1, result.output
    assert doc["rule"]["status"] == "failed"
    assert [c["status"] for c in doc["rule"]["checks"]] == ["failed", "passed"]
    assert (f"gate (no thresholds): scenarios: 1 scenario(s) failed their gating signals: "
            f"{forgot} — ") in result.stderr  # fmt: skip
    (row,) = [s for s in doc["sessions"] if s["scenario"] == forgot]
    assert (row["verdict"], row["expect_fail"], row["outcome"]) == ("failed", False, "failed")

    run = str(doc["run_id"])
    junit, md = tmp_path / "junit.xml", tmp_path / "gate.md"
    gated = invoke("gate", run, "--db", str(db), "--junit-xml", str(junit), "--summary-md", str(md))
    assert gated.exit_code == 1, gated.output
    assert "gate: failed: the agent missed the gate (exit 1)" in gated.stdout
    assert f"  failed     {forgot}  " in gated.stdout
    cases = {c.name: c for suite in JUnitXml.fromfile(str(junit)) for c in suite}
    (failure,) = cases[forgot].result
    assert isinstance(failure, Failure)
    (rule,) = cases["scenarios"].result
    assert isinstance(rule, Failure) and forgot in rule.message
    assert "### Failing scenarios (1)" in md.read_text()
    assert f"| {forgot.replace('_', chr(92) + '_')} |" in md.read_text()

    shown = invoke("runs", "show", run, "--db", str(db))
    assert shown.exit_code == 0, shown.output
    assert f"failed    scenarios: 1 scenario(s) failed their gating signals: {forgot}" in (
        shown.stdout
    )
    assert "failed: the agent missed the gate (exit 1)" in shown.stdout
