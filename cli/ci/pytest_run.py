"""The pytest plugin's one vae run: the selected items' scenarios, run, scored, read back.

Why apart from ``cli/ci/pytest_suite.py`` (collection and reporting): this is
where the plugin meets the bridge, the scorer and the store, all imported
only once a session has items to run. It turns the items pytest kept into a
``StartRunRequest`` — a whole file as a path source when every scenario of it
was selected, the selected scenarios as inline documents otherwise, so ``-k``
and ``--lf`` narrow the run itself — runs and scores it (``cli/ci/suite_run.py``)
and reads each scenario's verdict back with the gate's cases. Anything that
stops the run is kept as the reason every item errors with, never raised
into pytest; only a call that is wrong (a judge needed and none configured
for a running bridge, bad options) is a ``pytest.UsageError`` (exit 4).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from vae.recordings.trials import base_name

if TYPE_CHECKING:
    import pytest

    from vae.bridge.v1 import bridge_pb2
    from vae.recordings.scenarios.model import Scenario
    from vae.scorer_service.gate import Case


class ScenarioItem(Protocol):
    """What the run reads of a collected item (``pytest_suite.ScenarioItem``)."""

    path: Path
    run_name: str
    scenario: Scenario


class VaeSuite(Protocol):
    """What the run reads and fills in of the plugin (``pytest_suite.VaeSuite``).

    A protocol rather than the class, so that collection (``pytest_suite``)
    depends on the run and never the other way round.
    """

    config: pytest.Config
    db_path: Path
    failure: str
    run_id: str
    run_status: str
    scoring_id: str
    cases: dict[str, Case]
    verdict: list[str]

    def connector_options(self) -> str: ...

    def no_judge(self) -> bool: ...


def _sources(items: Sequence[ScenarioItem]) -> list[bridge_pb2.ScenarioSource]:
    from vae.bridge.v1 import bridge_pb2
    from vae.recordings.scenarios.lint import load_path

    chosen: dict[Path, set[str]] = defaultdict(set)
    for item in items:
        chosen[item.path].add(base_name(item.run_name))
    sources = []
    for path, names in sorted(chosen.items()):
        scenarios = load_path(str(path))
        if {sc.name for sc in scenarios} <= names:
            sources.append(bridge_pb2.ScenarioSource(path=str(path.resolve())))
            continue
        docs = [sc.to_dict() for sc in scenarios if sc.name in names]
        sources.append(bridge_pb2.ScenarioSource(inline=json.dumps(docs)))
    return sources


def _options(suite: VaeSuite, in_process: bool) -> bridge_pb2.RunOptions:
    from vae.cli.ci.suite_run import IN_PROCESS_DEFAULTS
    from vae.cli.runs.run_request import run_options

    get = suite.config.getoption
    given: dict[str, Any] = {
        "concurrency": get("vae_concurrency"),
        "max_duration": get("vae_max_duration"),
        "repeat": get("vae_repeat"),
        "user_connector": tuple(get("vae_user_connector")),
        "agent_connector": tuple(get("vae_agent_connector")),
        "connector_kind": get("vae_connector_kind"),
        "connector_options": suite.connector_options(),
        "modality": get("vae_modality"),
        "clock": get("vae_clock"),
    }
    if in_process:
        given = {**IN_PROCESS_DEFAULTS, **{k: v for k, v in given.items() if v is not None}}
    # Options vae run has and the plugin does not stay at the bridge's defaults.
    opts: defaultdict[str, Any] = defaultdict(lambda: None, given)
    return run_options(tuple(get("vae_tag") or ("pytest",)), opts)


def _check_options(suite: VaeSuite) -> None:
    get = suite.config.getoption
    for name in ("vae_repeat", "vae_concurrency"):
        value = get(name)
        if value is not None and value < 1:
            raise pytest.UsageError(f"--{name.replace('_', '-')} must be at least 1")
    if get("vae_judge_base_url") and not get("vae_judge_model"):
        raise pytest.UsageError("--vae-judge-base-url needs --vae-judge-model (VAE_JUDGE_MODEL)")
    if get("vae_judge_base_url") and suite.no_judge():
        raise pytest.UsageError("--vae-no-judge contradicts --vae-judge-base-url: give one")


def _say(suite: VaeSuite, line: str) -> None:
    reporter = suite.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"vae: {line}")


def run_items(suite: VaeSuite, items: Sequence[ScenarioItem]) -> None:
    """Run the items' scenarios as one run; fill ``suite.cases`` or ``suite.failure``."""
    from vae.cli.ci.suite_run import Judge, Where, require_judge, run_suite, score_suite
    from vae.scorer_service.judge.need import JudgeRequiredError

    _check_options(suite)
    get = suite.config.getoption
    tls_ca = Path(get("vae_tls_ca")) if get("vae_tls_ca") else None
    where = Where(suite.db_path, get("vae_bridge") or "", get("vae_token") or None, tls_ca,
                  get("vae_tts"))  # fmt: skip
    judge = Judge(get("vae_judge_base_url"), get("vae_judge_model"), get("vae_judge_api_key"),
                  suite.no_judge())  # fmt: skip
    try:
        require_judge(where, judge, [item.scenario for item in items])
    except JudgeRequiredError as exc:
        raise pytest.UsageError(
            f"vae: {exc} (pytest: --vae-judge-base-url, --vae-no-judge)"
        ) from exc
    request = _request(suite, items, where)
    names = sorted({base_name(i.run_name) for i in items})
    how = f"on the bridge at {where.address}" if where.address else "in-process"
    _say(suite, f"running {len(names)} scenario(s) as one run {how}, recording into "
                f"{suite.db_path} ...")  # fmt: skip
    try:
        done = run_suite(where, request)
    except Exception as exc:  # every item errors with this reason
        suite.failure = _reason(exc, where)
        _say(suite, f"could not run the suite: {suite.failure}")
        return
    suite.run_id, suite.run_status = done.run_id, done.status
    _say(suite, f"run {done.run_id} {done.status}; scoring it ...")
    try:
        suite.scoring_id = score_suite(where, judge, done.run_id)
    except Exception as exc:
        why = _reason(exc, where)
        suite.failure = f"run {done.run_id} was recorded, but scoring it failed: {why}"
        _say(suite, suite.failure)
        return
    _read_cases(suite)
    _say(suite, f"scoring {suite.scoring_id}")


def _request(
    suite: VaeSuite, items: Sequence[ScenarioItem], where: Any
) -> bridge_pb2.StartRunRequest:
    from vae.bridge.v1 import bridge_pb2

    return bridge_pb2.StartRunRequest(
        sources=_sources(items),
        options=_options(suite, in_process=not where.address),
        run_id=suite.config.getoption("vae_run_id") or "",
    )


def _read_cases(suite: VaeSuite) -> None:
    """Each scenario's verdict, through the one gate function (no thresholds: pytest's own
    outcome is per item; the gate's verdict on the whole run is printed in the summary)."""
    from vae.scorer_service.gate import GateSpec, gate

    result = gate(suite.db_path, suite.run_id, GateSpec(), scoring_ref=suite.scoring_id)
    suite.cases = {c.name: c for c in result.cases}
    suite.verdict = [f"gate (no thresholds): {result.headline}"]
    suite.verdict += [f"  {c.status:<9} {c.name}: {c.message}" for c in result.checks]


def _reason(exc: BaseException, where: Any) -> str:
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    code, details = getattr(exc, "code", None), getattr(exc, "details", None)
    if callable(code) and callable(details):
        target = f"the bridge at {where.address}" if where.address else "the in-process bridge"
        return f"{target}: {code().name}: {details()}"
    return f"{type(exc).__name__}: {exc}"
