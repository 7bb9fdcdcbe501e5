"""The CI examples run as written: every shell step, in order, as a runner runs it.

``examples/ci/github-actions.yml`` runs three times, as three pushes would:

1. on the default branch: the suite passes its gate without a threshold (one
   scenario passes, the other fails as built: tagged ``expect-fail``, an
   expected failure) and is kept as the baseline;
2. on a branch whose agent regressed (it cancels the wrong booking): the gate
   fails (exit 1) on the regression against that baseline, with a readable
   summary;
3. on a branch whose judge cannot be reached: "could not decide" (exit 3).

``examples/ci/gitlab-ci.yml`` runs the first two. Each job starts from a fresh
folder (the checkout: the example suite cut to two scenarios, so a job takes
seconds, not a minute) and a fresh virtualenv into which the job's own
install step installs vae — from a wheel of this checkout (``VAE_INSTALL``),
since a test cannot reach an index for it. The other values the test sets
are free ports instead of the examples' fixed ones and the reference bots'
buzz voice (``VAE_BOT_TTS``). What the steps produce is checked: exit codes,
the annotations, the step summary, the JUnit file as the reporter reads it,
the baseline database, the artifacts, the services stopped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from junitparser import Error, Failure

from tests.docs.ci_runner import Job, run_github, run_gitlab
from tests.helpers import ROOT, closed_port, free_port
from vae.recordings.read.reader import RecordingReader

GITHUB = ROOT / "examples" / "ci" / "github-actions.yml"
GITLAB = ROOT / "examples" / "ci" / "gitlab-ci.yml"
#: Two short calls: one passes (and needs the judge), one fails as built (no clean exit).
SUBSET = ("restaurant_cancel_booking", "restaurant_hang_up")
RIGHT = "arguments: {booking_id: B-17}"
WRONG = "arguments: {booking_id: B-71}"
SHA = "0123456789abcdef0123456789abcdef01234567"


PACKAGES = ("vae", "recordings", "bridge_service", "scorer_service", "cli", "bots")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout as a wheel, for the examples' ``pip install "$VAE_INSTALL"``.

    Built from a copy, so the build leaves nothing (``vae.egg-info``) in the checkout.
    """
    source, folder = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, source / package,
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(folder), str(source)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    (built,) = folder.glob("vae-*.whl")
    return built


def checkout(regressed: bool) -> Callable[[Path], None]:
    def copy(workdir: Path) -> None:
        suite = workdir / "examples" / "suite"
        suite.mkdir(parents=True)
        for name in SUBSET:
            text = (ROOT / "examples" / "suite" / f"{name}.yaml").read_text()
            if regressed:
                assert text.count(RIGHT) <= 1
                text = text.replace(RIGHT, WRONG)
            (suite / f"{name}.yaml").write_text(text)

    return copy


@pytest.fixture
def new_job(tmp_path: Path, wheel: Path) -> Iterator[Callable[[str, dict[str, str]], Job]]:
    """A fresh runner: its folder, a virtualenv first on PATH, the CI service's variables."""
    jobs: list[Job] = []

    def make(name: str, service_env: dict[str, str]) -> Job:
        root = tmp_path / name
        workdir = root / "work"
        workdir.mkdir(parents=True)
        venv = root / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                        str(venv)], check=True, timeout=120)  # fmt: skip
        keep = ("HOME", "LANG", "LC_ALL", "TMPDIR", "PIP_CONFIG_FILE", "PIP_INDEX_URL",
                "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "SSL_CERT_FILE")  # fmt: skip
        env = {k: os.environ[k] for k in keep if k in os.environ}
        env.update(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", CI="true",
                   VAE_BOT_TTS="buzz", **service_env)  # fmt: skip
        job = Job(workdir, env)
        jobs.append(job)
        return job

    yield make
    for job in jobs:
        job.close()


def ports(wheel: Path) -> dict[str, str]:
    bridge, judge = free_port(), free_port()
    return {
        "VAE_INSTALL": str(wheel),
        "VAE_BRIDGE": f"127.0.0.1:{bridge}",
        "VAE_JUDGE_ADDRESS": f"127.0.0.1:{judge}",
        "VAE_JUDGE_BASE_URL": f"http://127.0.0.1:{judge}/v1",
    }


def github_env(ref: str, run_id: str) -> tuple[dict[str, str], dict[str, str]]:
    env = {"GITHUB_ACTIONS": "true", "GITHUB_REF": ref, "GITHUB_REF_NAME": ref.split("/")[-1],
           "GITHUB_SHA": SHA, "GITHUB_RUN_ID": run_id, "GITHUB_RUN_ATTEMPT": "1",
           "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "you/agent"}  # fmt: skip
    context = {"github.ref": ref, "github.run_id": run_id, "default_branch": "main",
               "github.event.repository.default_branch": "main"}  # fmt: skip
    return env, context


def runs_in(db: Path) -> list[str]:
    with RecordingReader(db) as reader:
        return reader.run_ids()


def services_stopped(job: Job) -> bool:
    pids = (job.workdir / "vae-services.pid").read_text().split()
    return len(pids) == 4 and not any(Path(f"/proc/{pid}").exists() for pid in pids)


def gate_case(job: Job, name: str) -> object:
    return next(c for c in job.junit["vae gate"] if c.name == name)


@pytest.mark.timeout(900)
def test_github_actions_workflow(new_job: Callable[..., Job], wheel: Path) -> None:
    workflow = yaml.safe_load(GITHUB.read_text())
    cache: dict[str, Path] = {}
    gate = "Run the suite and gate it"

    env, context = github_env("refs/heads/main", "101")
    main = run_github(workflow, new_job("main", env), context, ports(wheel), checkout(False), cache)
    assert not main.failed, [
        (s.name, s.code, s.stdout[-2000:], s.stderr[-2000:]) for s in main.steps
    ]
    assert not main.step("Restore the default branch's baseline").ran
    assert main.step("Keep this run as the baseline").ran and list(cache) == ["vae-baseline-101"]
    assert main.summary().startswith("## ✅ vae gate: passed (exit 0)")
    assert runs_in(cache["vae-baseline-101"]) == [f"main-{SHA}"]
    verdicts = {c.name: c.is_passed for c in main.junit["restaurant"]}
    assert verdicts == {"restaurant_cancel_booking": True, "restaurant_hang_up": True}
    hang_up = next(c for c in main.junit["restaurant"] if c.name == "restaurant_hang_up")
    assert hang_up.system_out.startswith("expected failure (expect-fail): CLEAN_EXIT: ")
    assert "### Expected failures (built to fail) (1)" in main.summary()
    names = {p.name for p in main.artifacts}
    assert {"vae-report.html", "vae-junit.xml", "vae-summary.md", "vae.db", "bridge.log"} <= names
    assert services_stopped(main)

    env, context = github_env("refs/heads/agent-v2", "102")
    worse = run_github(workflow, new_job("regressed", env), context, ports(wheel), checkout(True),
                       cache)  # fmt: skip
    step = worse.step(gate)
    assert step.code == 1, step.stdout[-3000:] + step.stderr[-3000:]
    assert "::error title=vae gate failed::" in step.stdout
    summary = worse.summary()
    assert summary.startswith("## ❌ vae gate: failed: the agent missed the gate (exit 1)")
    assert f"### Against baseline main-{SHA}" in summary and "1 regressions" in summary
    assert "| restaurant\\_cancel\\_booking | ACTION\\_MATCH: " in summary
    assert "https://github.com/you/agent/actions/runs/102" in summary
    cancel = next(c for c in worse.junit["restaurant"] if c.name == "restaurant_cancel_booking")
    (failure,) = cancel.result
    assert isinstance(failure, Failure) and "booking_id: expected B-17" in failure.message
    (regressed,) = gate_case(worse, "max-regressions").result  # type: ignore[attr-defined]
    assert isinstance(regressed, Failure)
    assert "1 too many: restaurant_cancel_booking" in regressed.message
    assert not worse.step("Keep this run as the baseline").ran  # a failed gate keeps the old one
    assert worse.step("Publish the scenarios as tests").ran and services_stopped(worse)
    assert len(runs_in(worse.workdir / "vae.db")) == 2  # the baseline and this run, side by side

    env, context = github_env("refs/heads/judge-down", "103")
    with closed_port() as port:
        unreachable = {**ports(wheel), "VAE_JUDGE_BASE_URL": f"http://127.0.0.1:{port}/v1"}
        down = run_github(workflow, new_job("judge-down", env), context, unreachable,
                          checkout(False), cache)  # fmt: skip
    step = down.step(gate)
    assert step.code == 3, step.stdout[-3000:] + step.stderr[-3000:]
    assert "::error title=vae could not decide::" in step.stdout
    assert down.summary().startswith("## ⚠️ vae gate: could not decide (exit 3)")
    (error,) = gate_case(down, "scored").result  # type: ignore[attr-defined]
    assert isinstance(error, Error) and "cannot be used" in error.message
    assert list(cache) == ["vae-baseline-101"]


@pytest.mark.timeout(900)
def test_gitlab_ci_snippet(new_job: Callable[..., Job], wheel: Path) -> None:
    config = yaml.safe_load(GITLAB.read_text())
    cache: dict[str, Path] = {}

    def gitlab_env(branch: str, job_id: str) -> dict[str, str]:
        return {"GITLAB_CI": "true", "CI_COMMIT_BRANCH": branch, "CI_DEFAULT_BRANCH": "main",
                "CI_COMMIT_SHA": SHA, "CI_PIPELINE_ID": "7", "CI_JOB_ID": job_id,
                "CI_JOB_URL": f"https://gitlab.example/you/agent/-/jobs/{job_id}"}  # fmt: skip

    main = new_job("gl-main", gitlab_env("main", "201"))
    checkout(False)(main.workdir)
    name, main = run_gitlab(config, main, ports(wheel), cache)
    (script,) = main.steps
    assert name == "vae-main" and script.code == 0, script.stdout[-3000:] + script.stderr[-3000:]
    assert runs_in(cache["vae-baseline"] / "baseline" / "vae.db") == [f"main-{SHA}"]
    # The scenario built to fail is an expected failure: a passing test case, no threshold needed.
    assert all(c.is_passed for c in main.junit["restaurant"]) and len(main.junit["restaurant"]) == 2
    assert services_stopped(main)

    branch = new_job("gl-branch", gitlab_env("agent-v2", "202"))
    checkout(True)(branch.workdir)
    name, branch = run_gitlab(config, branch, ports(wheel), cache)
    (script,) = branch.steps
    assert name == "vae-branch" and script.code == 1, script.stdout[-3000:] + script.stderr[-3000:]
    assert "gate: failed: the agent missed the gate (exit 1)" in script.stdout
    assert f"regression(s) against baseline main-{SHA}" in script.stdout
    summary = (branch.workdir / "vae-summary.md").read_text()
    assert "https://gitlab.example/you/agent/-/jobs/202" in summary
    (regressed,) = gate_case(branch, "max-regressions").result  # type: ignore[attr-defined]
    assert isinstance(regressed, Failure)
    assert {"vae-report.html", "vae.db", "bridge.log"} <= {p.name for p in branch.artifacts}
    assert services_stopped(branch)
