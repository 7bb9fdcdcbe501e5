"""`pytest --vae-suite examples/suite`: scenarios as pytest items, run as one vae run.

Each test runs pytest in a subprocess in a fresh folder holding a copy of the
example suite, as a user would. Counts are derived from the suite's files
(their `expect-pass` / `expect-fail` tags), never hard-coded; a scenario built
to fail is a strict xfail item (tests/cli/ci/test_pytest_suite.py). The plugin is
found through its `pytest11` entry point when vae is installed with it
(`make test-deps`); otherwise it is loaded with `-p vae.cli.ci.pytest_plugin`.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from junitparser import Error, Failure, JUnitXml

from tests.helpers import ROOT, closed_port, untag_expect_fail
from vae.recordings.read.reader import RecordingReader

SUITE = ROOT / "examples" / "suite"
SIGNALS = ("ACTION_MATCH", "DB_STATE_MATCH", "DB_STATE_ASSERTION", "NL_ASSERTION",
           "JUDGE_PASSED", "CLEAN_EXIT", "stalled")  # fmt: skip


def expected() -> dict[str, str]:
    """Scenario name -> "pass" or "fail", from the files' tags."""
    out = {}
    for path in sorted(SUITE.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        tags = set(doc.get("tags", []))
        assert len(tags & {"expect-pass", "expect-fail"}) == 1, path
        out[doc["name"]] = "pass" if "expect-pass" in tags else "fail"
    return out


def plugin_args() -> list[str]:
    """``-p vae.cli.ci.pytest_plugin`` unless pytest already loads it through the entry point."""
    if not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        for ep in importlib.metadata.entry_points(group="pytest11"):
            if ep.value == "vae.cli.ci.pytest_plugin":
                return []
    return ["-p", "vae.cli.ci.pytest_plugin"]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    shutil.copytree(SUITE, tmp_path / "examples" / "suite")
    return tmp_path


def pytest_run(cwd: Path, *args: str, timeout: float = 400) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "VAE_"))}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "pytest", *plugin_args(), "-p", "no:randomly", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def sessions(db: Path) -> list[str]:
    with RecordingReader(db) as reader:
        (run_id,) = reader.run_ids()[-1:]
        return sorted(s.scenario_name for s in reader.sessions(run_id))


def modes(db: Path) -> set[tuple[str, str]]:
    """The (modality, clock) pairs the last run's sessions were recorded with."""
    with RecordingReader(db) as reader:
        (run_id,) = reader.run_ids()[-1:]
        return {
            (m.modality, m.clock)
            for s in reader.sessions(run_id)
            for m in [reader.session_mode(s.session_id)]
        }


@pytest.mark.timeout(600)
def test_the_example_suite_as_pytest_items_then_last_failed(workdir: Path) -> None:
    """Built-to-fail scenarios are xfailed; one whose `expect-fail` tag was removed (as a user
    who forgot it) fails, and `--lf` runs just that one again."""
    want = expected()
    built = sorted(n for n, v in want.items() if v == "fail")
    forgot = built[0]
    untag_expect_fail(workdir / "examples" / "suite" / f"{forgot}.yaml")
    # The fast tier (text turns, on the virtual clock: --clock auto): the plugin's items,
    # outcomes, JUnit and --lf do not depend on it, and the suite's verdicts are the same
    # in every tier (tests/cli/demo/test_demo_tiers.py).
    done = pytest_run(workdir, "--vae-suite", "examples/suite", "--vae-tts", "buzz", "-v",
                      "--junitxml", "junit.xml", "--vae-modality", "text")  # fmt: skip
    assert done.returncode == 1, done.stdout[-4000:] + done.stderr[-2000:]
    assert f"collected {len(want)} items" in done.stdout
    for name, verdict in want.items():
        word = "PASSED" if verdict == "pass" else "FAILED" if name == forgot else "XFAIL"
        assert f"examples/suite/{name}.yaml::{name} {word}" in done.stdout, name
    passing = len(want) - len(built)
    assert f"1 failed, {passing} passed, {len(built) - 1} xfailed" in done.stdout
    assert sessions(workdir / "vae.db") == sorted(want)  # one run, every scenario once
    assert modes(workdir / "vae.db") == {("text", "virtual")}

    cases = {c.name: c for suite in JUnitXml.fromfile(str(workdir / "junit.xml")) for c in suite}
    assert set(cases) == set(want)
    (failure,) = cases[forgot].result
    assert isinstance(failure, Failure)
    first = failure.text.splitlines()[0]
    assert first.startswith(f"{forgot} failed: ") and any(s in first for s in SIGNALS), first
    for name in built[1:]:
        (xfail,) = cases[name].result  # pytest writes an xfail as <skipped type="pytest.xfail">
        assert xfail.message.startswith("expected failure: ") and any(
            s in xfail.message for s in SIGNALS
        ), name
    assert all(cases[n].is_passed for n, v in want.items() if v == "pass")

    again = pytest_run(workdir, "--vae-suite", "examples/suite", "--vae-tts", "buzz", "--lf",
                       "--vae-modality", "text")  # fmt: skip
    assert again.returncode == 1, again.stdout[-3000:]
    assert "1 failed" in again.stdout and "passed" not in again.stdout.splitlines()[-1]
    assert sessions(workdir / "vae.db") == [forgot]  # --lf narrowed the run itself


@pytest.mark.timeout(600)
def test_k_runs_only_the_selected_scenario(workdir: Path) -> None:
    want = expected()
    done = pytest_run(workdir, "--vae-suite", "examples/suite", "--vae-tts", "buzz",
                      "-k", "book_table", "--vae-db", "k.db", "--vae-clock", "virtual")  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"1 passed, {len(want) - 1} deselected" in done.stdout
    assert sessions(workdir / "k.db") == ["restaurant_book_table"]  # one session, not all
    assert modes(workdir / "k.db") == {("audio", "virtual")}


@pytest.mark.timeout(600)
def test_unscored_items_are_errors_never_passes(workdir: Path) -> None:
    args = ["--vae-suite", "examples/suite", "--vae-tts", "buzz", "-k", "order_status_noisy",
            "--vae-clock", "virtual"]  # fmt: skip
    done = pytest_run(workdir, *args, "--vae-no-judge", "--junitxml", "j.xml")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 error" in done.stdout and "passed" not in done.stdout.splitlines()[-1]
    (case,) = [c for s in JUnitXml.fromfile(str(workdir / "j.xml")) for c in s]
    (error,) = case.result
    assert isinstance(error, Error)
    assert "retail_order_status_noisy unscored:" in error.text and "no_judge" in error.text
    with closed_port() as port:
        judge = ["--vae-judge-base-url", f"http://127.0.0.1:{port}/v1", "--vae-judge-model", "m"]
        down = pytest_run(workdir, *args, *judge, "--vae-db", "down.db")
    assert down.returncode == 1, down.stdout[-3000:]
    assert "1 error" in down.stdout and "scoring it failed: JudgeUnusableError" in down.stdout


@pytest.mark.timeout(600)
def test_calling_it_wrong(workdir: Path) -> None:
    missing = pytest_run(workdir, "--vae-suite", "nowhere")
    assert missing.returncode == 4 and "--vae-suite: " in missing.stderr
    parallel = pytest_run(workdir, "--vae-suite", "examples/suite", "-n", "2")
    assert parallel.returncode == 4 and "run it without -n" in parallel.stderr
    (workdir / "broken").mkdir()
    (workdir / "broken" / "bad.yaml").write_text("name: bad\nagent: [not, a, side]\n")
    broken = pytest_run(workdir, "--vae-suite", "broken")
    assert broken.returncode == 2 and "broken/bad.yaml" in broken.stdout
    with closed_port() as port:
        judged = pytest_run(workdir, "--vae-suite", "examples/suite", "--vae-bridge",
                            f"127.0.0.1:{port}", "-k", "wrong_date")  # fmt: skip
        assert judged.returncode == 4 and "need a judge" in judged.stderr
        unreachable = pytest_run(workdir, "--vae-suite", "examples/suite", "--vae-bridge",
                                 f"127.0.0.1:{port}", "-k", "book_table")  # fmt: skip
    assert unreachable.returncode == 1 and "1 error" in unreachable.stdout
    assert f"the bridge at 127.0.0.1:{port}: UNAVAILABLE" in unreachable.stdout


def test_the_plugin_is_idle_and_light_without_vae_suite(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    (tmp_path / "data.yaml").write_text("not: a scenario\n")
    plain = pytest_run(tmp_path)
    assert plain.returncode == 0 and "1 passed" in plain.stdout and "vae:" not in plain.stdout
    helped = pytest_run(tmp_path, "--help")
    assert "--vae-suite=PATH" in helped.stdout and "--vae-judge-base-url" in helped.stdout
    assert "--vae-modality=" in helped.stdout and "--vae-clock=" in helped.stdout
    # Nothing heavy, and of vae only the plugin's own packages (whose __init__ are docstrings).
    probe = (
        "import sys, vae.cli.ci.pytest_plugin; "
        "heavy = {'grpc', 'numpy', 'openai', 'aiosqlite', "
        "'recordings', 'scorer_service', 'bridge_service', 'bots'}; "
        "own = {'vae', 'vae.cli', 'vae.cli.ci', 'vae.cli.ci.pytest_plugin'}; "
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}), "
        "sorted(m for m in sys.modules if m.split('.')[0] == 'vae' and m not in own))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)  # fmt: skip
    assert loaded.stdout.strip() == "[] []"
