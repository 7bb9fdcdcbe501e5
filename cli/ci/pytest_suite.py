"""What ``pytest --vae-suite PATH`` does: scenarios as items, one run, one verdict per item.

Registered by ``cli/ci/pytest_plugin.py`` only when ``--vae-suite`` is given.

- Collection: each scenario file under a suite path is a pytest ``File``;
  each scenario in it an item ``FILE::NAME`` (``FILE::NAME#k`` per trial with
  ``--vae-repeat K``). Without test paths on the command line, pytest
  collects only the suites; with some, the suites are collected beside them.
  A broken scenario file is a collection error naming every problem.
- The run: once pytest has selected its items (``-k``, ``--lf``, ``-m``, node
  ids), the scenarios of the selected items — and only those — run as one vae
  run at the start of the test loop (``cli/ci/suite_run.py``), recorded in
  ``--vae-db``, and are scored there.
- Reporting: each item reads its scenario's verdict from that scoring
  (``vae.scorer_service.gate.run_cases``): passed; failed with the one-line
  reason and every failing signal as the failure text; unscored — or a run
  that could not be made — as an error (raised in setup), never a pass; a
  scenario no success signal applies to is skipped. A scenario built to fail
  (``expect_fail``, the ``expect-fail`` tag) carries a strict ``xfail`` mark:
  failing is ``xfailed`` with its reason, passing is ``XPASS(strict)`` — a
  failure, as the gate counts it. So ``-x``, ``--junitxml``, ``-rxX`` and
  pytest's exit codes behave as pytest users expect.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from vae.recordings.scenarios.model import Scenario
    from vae.scorer_service.gate import Case

#: Scenario files (as ``vae.recordings.scenarios.sources`` reads suites).
SUFFIXES = (".yaml", ".yml", ".json")
#: The xfail reason of a scenario built to fail (``[XPASS(strict)] …`` when it passes).
BUILT_TO_FAIL = "built to fail (expect-fail): it must fail its gating signals"


class ScenarioFailed(Exception):
    """The scenario ran and failed its signals: the item fails."""


class ScenarioUndecided(Exception):
    """No verdict (unscored, not run, the run could not be made): the item errors."""


class ScenarioItem(pytest.Item):
    def __init__(self, *, scenario: Scenario, run_name: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        #: The name the run gives this item's session (``name`` or ``name#k``).
        self.run_name = run_name

    def _suite(self) -> VaeSuite:
        plugin = self.config.pluginmanager.get_plugin("vae-suite")
        assert isinstance(plugin, VaeSuite)
        return plugin

    def setup(self) -> None:
        suite = self._suite()
        if suite.failure:
            raise ScenarioUndecided(suite.failure)
        case = suite.cases.get(self.run_name)
        if case is None:
            raise ScenarioUndecided(f"{self.run_name}: the run {suite.run_id} has no such scenario")
        for key, value in suite.properties().items():
            self.user_properties.append((key, value))
        self.user_properties.append(("vae.session_id", case.session_id or ""))
        if case.verdict == "unscored":
            raise ScenarioUndecided(_describe(case, suite))
        if case.verdict == "not_applicable":
            pytest.skip("not applicable: no success signal of this scenario applies")

    def runtest(self) -> None:
        case = self._suite().cases[self.run_name]
        if case.outcome == "xfailed":  # the reason it failed, as pytest -rx shows it
            pytest.xfail(f"expected failure: {case.reason or 'failed'}")
        if case.verdict == "failed":
            raise ScenarioFailed(_describe(case, self._suite()))
        if case.verdict != "passed":  # only a pass passes (setup already raised for unscored)
            raise ScenarioUndecided(_describe(case, self._suite()))

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, ScenarioFailed | ScenarioUndecided):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"vae scenario {self.run_name}"


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[ScenarioItem]:
        from vae.recordings.errors import ScenarioError
        from vae.recordings.scenarios.lint import load_path

        try:
            scenarios = load_path(str(self.path))
        except ScenarioError as exc:
            raise self.CollectError(f"{self.path}: {exc}") from exc
        repeat = self.config.getoption("vae_repeat") or 1
        for sc in scenarios:
            names = [sc.name] if repeat <= 1 else [f"{sc.name}#{k}" for k in range(1, repeat + 1)]
            for name in names:
                item = ScenarioItem.from_parent(self, name=name, scenario=sc, run_name=name)
                if sc.expect_fail:  # strict: a pass fails; only the scenario's failure is one
                    item.add_marker(pytest.mark.xfail(reason=BUILT_TO_FAIL, strict=True,
                                                      raises=ScenarioFailed))  # fmt: skip
                yield item


def _describe(case: Case, suite: VaeSuite) -> str:
    lines = [f"{case.name} {case.verdict}: {case.reason or ', '.join(case.causes)}"]
    lines += [f"  {s.line()}" for s in case.signals]
    lines.append(f"run {suite.run_id}, scoring {suite.scoring_id}, session {case.session_id}"
                 f" in {suite.db_path}")  # fmt: skip
    return "\n".join(lines)


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


class VaeSuite:
    """The plugin object of one pytest session with ``--vae-suite``."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        if config.getoption("numprocesses", default=None) or hasattr(config, "workerinput"):
            raise pytest.UsageError("--vae-suite runs the suite as one vae run: run it without -n")
        self.roots = [Path(p).resolve() for p in config.getoption("vae_suite")]
        for root in self.roots:
            if not root.exists():
                raise pytest.UsageError(f"--vae-suite: {root} does not exist")
        db = config.getoption("vae_db") or os.environ.get("VAE_DB") or "vae.db"
        self.db_path = Path(db).resolve()
        self.failure = ""
        self.run_id = ""
        self.run_status = ""
        self.scoring_id = ""
        self.cases: dict[str, Case] = {}
        #: The gate's verdict on the run, for the terminal summary.
        self.verdict: list[str] = []
        if config.args_source != pytest.Config.ArgsSource.ARGS:
            config.args[:] = [str(r) for r in self.roots]  # only the suites
        else:
            given = [Path(a.split("::")[0]).resolve() for a in config.args]
            config.args.extend(str(r) for r in self.roots
                               if not any(g == r or r in g.parents for g in given))  # fmt: skip

    def _in_suite(self, path: Path) -> bool:
        resolved = path.resolve()
        return any(resolved == r or r in resolved.parents for r in self.roots)

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> Any:
        scenario = file_path.suffix in SUFFIXES and not file_path.name.endswith(".schema.json")
        if scenario and self._in_suite(file_path):
            return ScenarioFile.from_parent(parent, path=file_path)
        return None

    def pytest_report_header(self) -> str:
        where = self.config.getoption("vae_bridge") or "an in-process bridge, reference bots"
        return f"vae: suites {', '.join(map(str, self.roots))}; {where}; db {self.db_path}"

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Iterator[None]:
        items = [i for i in session.items if isinstance(i, ScenarioItem)]
        collect_only = session.config.option.collectonly
        broken = session.testsfailed and not session.config.option.continue_on_collection_errors
        if items and not collect_only and not broken:
            from vae.cli.ci.pytest_run import run_items

            run_items(self, items)
        return (yield)

    def properties(self) -> dict[str, str]:
        values = {"vae.run_id": self.run_id, "vae.scoring_id": self.scoring_id,
                  "vae.database": str(self.db_path)}  # fmt: skip
        return {k: v for k, v in values.items() if v}

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.run_id and not self.failure:
            return
        write = terminalreporter.write_line
        terminalreporter.section("vae")
        if self.run_id:
            write(f"run {self.run_id} ({self.run_status}), scoring {self.scoring_id or 'none'}, "
                  f"database {self.db_path}")  # fmt: skip
            for line in self.verdict:
                write(line)
            write(f"report: vae report {self.run_id} --db {self.db_path} -o report.html")
            write(f"gate:   vae gate {self.run_id} --db {self.db_path} --junit-xml vae-junit.xml")
        if self.failure:
            write(f"could not run the suite: {self.failure}")

    def connector_options(self) -> str:
        text = str(self.config.getoption("vae_connector_options") or "{}")
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise pytest.UsageError(f"--vae-connector-options: {exc}") from exc
        return text

    def no_judge(self) -> bool:
        return bool(self.config.getoption("vae_no_judge")) or _flag("VAE_NO_JUDGE")
