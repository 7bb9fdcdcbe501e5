"""A small stand-in for a CI runner: runs the shell steps of the CI examples as written.

``examples/ci/github-actions.yml`` and ``examples/ci/gitlab-ci.yml`` are run
step by step, in order, in a fresh folder per job (the checkout), with the
environment a runner gives (``GITHUB_*`` / ``CI_*`` variables, a
``GITHUB_STEP_SUMMARY`` file per step, ``GITHUB_ENV`` carried to later steps)
and ``bash`` as the runners run it. What only the hosting service does is
done here by hand, and nothing else: the ``uses:`` actions (checkout, setup,
cache restore/save, artifact upload, the JUnit check) and GitLab's cache and
artifacts. Expressions and conditions are evaluated for the forms the
examples use; any other form fails the test, so an edit to the examples
cannot slip past it. Processes a step leaves running are in the step's own
process group, which :meth:`Job.close` ends.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from junitparser import JUnitXml


@dataclass
class Step:
    name: str
    ran: bool
    code: int = 0
    stdout: str = ""
    stderr: str = ""
    summary: str = ""


@dataclass
class Job:
    workdir: Path
    env: dict[str, str]
    steps: list[Step] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)
    artifacts: list[Path] = field(default_factory=list)
    junit: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(s.ran and s.code for s in self.steps)

    def step(self, name: str) -> Step:
        return next(s for s in self.steps if s.name == name)

    def summary(self) -> str:
        return "".join(s.summary for s in self.steps)

    def bash(self, script: str, options: list[str], extra: dict[str, str]) -> Step:
        proc = subprocess.Popen(
            ["bash", "--noprofile", "--norc", *options, "-c", script],
            cwd=self.workdir, env={**self.env, **extra}, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        self.groups.append(proc.pid)
        out, err = proc.communicate(timeout=600)
        return Step("", True, proc.returncode, out, err)

    def close(self) -> None:
        for group in self.groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)


_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_REF_TEST = re.compile(
    r"^github\.ref (==|!=) format\('refs/heads/\{0\}', github\.event\.repository\.default_branch\)$"
)


def expand(text: str, context: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        assert match.group(1) in context, f"expression the runner stand-in does not know: {text}"
        return context[match.group(1)]

    return _EXPR.sub(one, text)


def github_if(condition: str, job: Job, context: dict[str, str]) -> bool:
    result = True
    for term in (t.strip() for t in condition.split("&&")):
        if term == "always()":
            value = True
        elif term == "success()":
            value = not job.failed
        elif match := _REF_TEST.match(term):
            same = context["github.ref"] == f"refs/heads/{context['default_branch']}"
            value = same if match.group(1) == "==" else not same
        else:
            raise AssertionError(f"condition the runner stand-in does not know: {condition}")
        result = result and value
    return result


def _github_action(step: dict[str, Any], job: Job, context: dict[str, str],
                   checkout: Callable[[Path], None], cache: dict[str, Path]) -> Step:  # fmt: skip
    uses, args = step["uses"], {k: expand(str(v), context) for k, v in step.get("with", {}).items()}
    name = step.get("name", uses)
    if uses == "actions/checkout@v4":
        checkout(job.workdir)
    elif uses == "actions/setup-python@v5":
        assert args["python-version"] == "3.11"  # the runner's python is the one on PATH
    elif uses == "actions/cache/restore@v4":
        hits = [k for k in cache if k == args["key"]] or sorted(
            (k for k in cache if k.startswith(args["restore-keys"])),
            key=lambda k: cache[k].stat().st_mtime,
        )
        if hits:
            shutil.copy(cache[hits[-1]], job.workdir / args["path"])
    elif uses == "actions/cache/save@v4":
        kept = job.workdir.parent / f"cache-{args['key']}"
        shutil.copy(job.workdir / args["path"], kept)
        cache[args["key"]] = kept
    elif uses == "actions/upload-artifact@v4":
        for pattern in args["path"].split():
            job.artifacts += sorted(job.workdir.glob(pattern))
    elif uses == "mikepenz/action-junit-report@v5":
        job.junit = {s.name: s for s in JUnitXml.fromfile(str(job.workdir / args["report_paths"]))}
    else:
        raise AssertionError(f"action the runner stand-in does not know: {uses}")
    return Step(name, True)


def run_github(
    workflow: dict[str, Any], job: Job, context: dict[str, str], overrides: dict[str, str],
    checkout: Callable[[Path], None], cache: dict[str, Path],
) -> Job:  # fmt: skip
    """Run the workflow's one job on ``job`` (its env already holds the runner's variables)."""
    (spec,) = workflow["jobs"].values()
    job.env.update({k: expand(str(v), context) for k, v in workflow["env"].items()})
    job.env.update(overrides)
    github_env = job.workdir.parent / "github_env"
    for i, step in enumerate(spec["steps"]):
        name = step.get("name", step.get("uses", f"step {i}"))
        if not github_if(step.get("if", "success()"), job, context):
            job.steps.append(Step(name, False))
            continue
        if "uses" in step:
            job.steps.append(_github_action(step, job, context, checkout, cache))
            continue
        summary = job.workdir.parent / f"summary-{i}.md"
        github_env.write_text("")
        extra = {"GITHUB_ENV": str(github_env), "GITHUB_STEP_SUMMARY": str(summary)}
        done = job.bash(expand(step["run"], context), ["-eo", "pipefail"], extra)
        done.name, done.summary = name, summary.read_text() if summary.exists() else ""
        job.steps.append(done)
        for line in github_env.read_text().splitlines():
            key, sep, value = line.partition("=")
            assert sep and "<<" not in key, f"GITHUB_ENV line the stand-in does not read: {line}"
            job.env[key] = value
    return job


def gitlab_rule(rule: str, env: dict[str, str]) -> bool:
    def value(term: str) -> str:
        assert term.startswith("$"), rule
        return env.get(term[1:], "")

    result = True
    for term in (t.strip() for t in rule.split("&&")):
        if match := re.fullmatch(r"(\$\w+) (==|!=) (\$\w+)", term):
            same = value(match.group(1)) == value(match.group(3))
            result = result and (same if match.group(2) == "==" else not same)
        elif re.fullmatch(r"\$\w+", term):
            result = result and bool(value(term))
        else:
            raise AssertionError(f"rule the runner stand-in does not know: {rule}")
    return result


def run_gitlab(config: dict[str, Any], job: Job, overrides: dict[str, str],
               cache: dict[str, Path]) -> tuple[str, Job]:  # fmt: skip
    """Run the one job whose rules match; GitLab's cache and artifacts done by hand."""
    chosen = [name for name, spec in config.items() if not name.startswith(".")
              and any(gitlab_rule(r["if"], job.env) for r in spec.get("rules", []))]  # fmt: skip
    (name,) = chosen
    spec = {**config[config[name]["extends"]], **config[name]}
    job.env.update({k: str(v) for k, v in spec["variables"].items()})
    job.env.update(overrides)
    job.env["CI_JOB_NAME"] = name
    kept = cache.get(spec["cache"]["key"])
    if spec["cache"]["policy"] in ("pull", "pull-push") and kept is not None:
        shutil.copytree(kept, job.workdir, dirs_exist_ok=True)
    done = job.bash("\n".join(spec["script"]), ["-eo", "pipefail"], {})
    done.name = "script"
    job.steps.append(done)
    if not done.code and spec["cache"]["policy"] in ("push", "pull-push"):
        store = job.workdir.parent / f"cache-{spec['cache']['key']}"
        for path in spec["cache"]["paths"]:
            if (job.workdir / path).exists():
                shutil.copytree(job.workdir / path, store / path, dirs_exist_ok=True)
        cache[spec["cache"]["key"]] = store
    for pattern in spec["artifacts"]["paths"]:
        job.artifacts += sorted(job.workdir.glob(pattern))
    report = job.workdir / spec["artifacts"]["reports"]["junit"]
    job.junit = {s.name: s for s in JUnitXml.fromfile(str(report))} if report.exists() else {}
    return name, job
