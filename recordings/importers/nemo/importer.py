"""``vae import nemo DIR``: an established-framework results directory into the store.

The directory becomes one run (``source = "import:nemo"``); each scenario
directory one session, and each ``<name>.killed.<ts>/`` an earlier attempt of
that scenario, kept and marked superseded when a later attempt exists (a
crashed directory with no successor stays unfinished, so a resume sees it as
in flight). The scenario is rebuilt from ``scenario_config/`` and frozen with
the run; the framework's own verdicts become a first scoring; files that do not
map onto the store are kept raw as artifacts beside the run or session.
A stop reason the table in ``vae.recordings.stop_reasons`` does not know is kept
as it is: the attempt reads unfinished, like a crashed one.

Missing or malformed files are reported per scenario and never abort the
import: the report lists what was imported and what was not, and why. An
attempt that crashed or was killed is imported unfinished (``attempt_crashed``)
and the run then reads ``failed``; a source already imported (same path and
content) is refused unless ``again`` (``nemo_fingerprint``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vae.recordings.backends.locator import StoreRef
from vae.recordings.errors import StorageError, StoreError
from vae.recordings.importers.nemo.files import RUN_ROOT, read_json, read_text
from vae.recordings.importers.nemo.fingerprint import AlreadyImportedError, find_import, fingerprint
from vae.recordings.importers.nemo.layout import (
    ImportSourceError,
    ScenarioDirs,
    choose_run_id,
    run_id_from_dir,
    scan,
    session_id_for,
)
from vae.recordings.importers.nemo.report import AttemptReport, ImportReport, ScenarioReport
from vae.recordings.importers.nemo.run_args import created_ns as _created_ns
from vae.recordings.importers.nemo.run_args import options as _options
from vae.recordings.importers.nemo.scenario import load_scenario
from vae.recordings.importers.nemo.scores import original_scores, summary_of
from vae.recordings.importers.nemo.session import AttemptData, read_attempt
from vae.recordings.models import (
    ArtifactRecord,
    RunRecord,
    RunScenario,
    RunStatus,
    ScoreRecord,
    ScoringRecord,
    SessionRecord,
    SessionStatus,
)
from vae.recordings.read.reader import RecordingReader
from vae.recordings.stop_reasons import is_finished
from vae.recordings.write.writer import RecordingWriter, open_writer

SOURCE = "import:nemo"
RUN_FILES = (
    "run_args.json",
    "all_summary.txt",
    "all_metrics.json",
    "all_latencies.csv",
    "evaluation_log.txt",
)


async def import_nemo(
    db_path: StoreRef,
    results_dir: str | Path,
    *,
    run_id: str | None = None,
    on_scenario: Callable[[str], None] | None = None,
    again: bool = False,
) -> ImportReport:
    """Import ``results_dir`` into the store at ``db_path``; return what happened."""
    src = await asyncio.to_thread(_survey, Path(results_dir))
    RUN_ROOT.set(src.root)
    content_hash = await asyncio.to_thread(fingerprint, src.root)
    if not again:
        found = await asyncio.to_thread(find_import, db_path, SOURCE, src.root, content_hash)
        if found is not None:
            raise AlreadyImportedError(src.root, found)
    async with open_writer(db_path) as writer:
        existing = await asyncio.to_thread(_run_ids, db_path)
        rid = choose_run_id(run_id, run_id_from_dir(src.root), existing)
        report = ImportReport(run_id=rid, source_dir=str(src.root), problems=list(src.problems))
        created = _created_ns(src.run_args)
        # ``running`` until every row is committed: a store failing mid-import never
        # leaves a run that reads ``completed`` (vae.recordings.backends.faults).
        await writer.create_run(
            RunRecord(
                rid,
                created,
                RunStatus.RUNNING,
                "import",
                {**_options(src.run_args, src.root), "import_hash": content_hash},
                ["imported", "nemo"],
                None,
                SOURCE,
            )
        )
        state = _RunState(rid, created, f"{rid}.nemo-original")
        try:
            for name, text in src.run_files.items():
                await writer.add_artifact(ArtifactRecord(rid, name, text))
            for ordinal, dirs in enumerate(src.scenarios):
                if writer.failure is not None:  # stop at once: nothing more can be stored
                    raise StorageError(f"import stopped: {writer.failure}")
                report.scenarios.append(await _import_scenario(writer, state, ordinal, dirs))
                if on_scenario is not None:
                    on_scenario(dirs.name)
            # Every row is committed before the run or the scoring may say it is whole.
            await writer.flush()
        except BaseException as exc:
            await _fail(writer, state, exc)
            raise
        last = max(state.ends, default=created)
        status = RunStatus.COMPLETED if src.complete else RunStatus.FAILED
        if state.unfinished:
            status = RunStatus.FAILED
            report.problems.append(
                f"{len(state.unfinished)} scenario(s) end in a crashed or unfinished attempt: "
                f"{', '.join(state.unfinished)} (unscored; vae run --resume runs them again)"
            )
        await writer.update_run_status(rid, status, last)
        if state.scoring_created:
            report.scoring_id = state.scoring_id
            await writer.finish_scoring(
                state.scoring_id,
                status="complete",
                summary=summary_of(state.scores),
                finished_ns=last,
            )
        await writer.flush()
    return report


async def _fail(writer: RecordingWriter, state: _RunState, exc: BaseException) -> None:
    """Record the run (and its first scoring) ``failed``; salvaged after a storage failure."""
    now = time.time_ns()
    error = f"import stopped: {type(exc).__name__}: {exc}"
    await writer.update_run_status(state.run_id, RunStatus.FAILED, now, error)
    if state.scoring_created:
        await writer.finish_scoring(
            state.scoring_id, status="failed", summary={"error": error}, finished_ns=now
        )
    with contextlib.suppress(StoreError):
        await writer.flush()


@dataclass
class _Source:
    root: Path
    scenarios: list[ScenarioDirs]
    run_args: Any
    complete: bool
    run_files: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def _survey(path: Path) -> _Source:
    """Everything run-level about the directory (blocking: runs in a thread)."""
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such directory")
    root = path.resolve()
    RUN_ROOT.set(root)
    found = scan(root)
    src_links: list[str] = []
    if not found:
        raise ImportSourceError(
            f"{root}: no scenario directories (expected <scenario>/metrics.json,"
            " conversation_log.* or scenario_config/ below it)"
        )
    for child in sorted(root.iterdir()):
        if child.is_symlink() and child.is_dir():
            src_links.append(f"{child.name}: a symlinked directory; not followed")
    run_args, problem = read_json(root / "run_args.json")
    src = _Source(root, found, run_args, (root / "all_metrics.json").is_file())
    src.problems.extend(src_links)
    if problem:
        src.problems.append(problem)
    if not src.complete:
        src.problems.append("all_metrics.json missing: the run did not finish")
    for name in RUN_FILES:
        text, problem = read_text(root / name)
        if problem:
            src.problems.append(problem)
        if text is not None:
            src.run_files[name] = text
    return src


@dataclass
class _RunState:
    run_id: str
    created_ns: int
    scoring_id: str
    scoring_created: bool = False
    ends: list[int] = field(default_factory=list)
    scores: list[ScoreRecord] = field(default_factory=list)
    #: Scenarios whose last attempt crashed or never ended.
    unfinished: list[str] = field(default_factory=list)


async def _import_scenario(
    writer: RecordingWriter, state: _RunState, ordinal: int, dirs: ScenarioDirs
) -> ScenarioReport:
    run_id = state.run_id
    report = ScenarioReport(dirs.name)
    scenario = load_scenario(dirs.name, _config_dir(dirs))
    report.problems.extend(scenario.problems)
    doc = scenario.document
    await writer.add_run_scenarios(
        [RunScenario(run_id, dirs.name, ordinal, str(doc.get("domain", "default")), doc)]
    )
    for name, raw in scenario.raw.items():
        await writer.add_artifact(ArtifactRecord(run_id, f"{dirs.name}/{name}", raw))
    for number, attempt_dir in enumerate(dirs.attempts, start=1):
        session_id = session_id_for(run_id, dirs.name, number)
        data = await asyncio.to_thread(
            read_attempt, attempt_dir.path, session_id, state.created_ns, killed=attempt_dir.killed
        )
        later = number < len(dirs.attempts)
        status = await _write_attempt(
            writer, run_id, dirs.name, number, session_id, data, later, attempt_dir.path.name
        )
        state.ends.append(data.ended_ns)
        report.attempts.append(
            AttemptReport(attempt_dir.path.name, session_id, number, status, data.problems)
        )
        finished = is_finished(data.stop_reason)
        if not later and not finished:
            state.unfinished.append(dirs.name)
        # The framework's verdicts only for an attempt that ran to a finished end.
        if data.metrics is not None and not later and finished:
            scores = original_scores(state.scoring_id, session_id, data.metrics)
            if scores and not state.scoring_created:
                await writer.create_scoring(
                    _original_scoring(state.scoring_id, run_id, state.created_ns)
                )
                state.scoring_created = True
            await writer.add_scores(scores)
            state.scores.extend(scores)
    return report


async def _write_attempt(
    writer: RecordingWriter,
    run_id: str,
    name: str,
    number: int,
    session_id: str,
    data: AttemptData,
    superseded: bool,
    dirname: str,
) -> str:
    await writer.start_session(
        SessionRecord(
            session_id,
            run_id,
            name,
            number,
            SessionStatus.RUNNING,
            data.started_ns,
            audio=data.audio,
            user_bot={"name": "nemo-user", "imported": True},
            agent_bot={"name": "nemo-agent", "imported": True},
        )
    )
    for seg in data.segments:
        await writer.add_segment(seg)
    await writer.add_events(data.events)
    for fs in data.final_states:
        await writer.put_final_state(fs)
    for artifact, text in data.artifacts.items():
        await writer.add_artifact(ArtifactRecord(run_id, artifact, text, session_id))
    await writer.end_session(
        session_id,
        ended_ns=data.ended_ns,
        stop_reason=data.stop_reason,
        stop_detail=data.stop_detail,
        clean_exit=data.clean_exit,
        user_turns=data.user_turns,
        agent_turns=data.agent_turns,
    )
    status = "ended"
    if data.crashed:
        status = "crashed"
    elif not is_finished(data.stop_reason):
        status = f"unfinished ({data.stop_reason})"
    if superseded:
        await writer.mark_superseded(session_id, f"moved aside as {dirname} by a resume")
        status = "superseded (crashed)" if data.crashed else "superseded"
    return status


def _original_scoring(scoring_id: str, run_id: str, created_ns: int) -> ScoringRecord:
    return ScoringRecord(
        scoring_id,
        run_id,
        created_ns,
        "running",
        {"source": SOURCE, "note": "verdicts recorded by the established framework"},
        versions={"importer": "1"},
    )


def _config_dir(dirs: ScenarioDirs) -> Path | None:
    """The newest attempt's scenario_config/ (any attempt's if the newest lacks it)."""
    for attempt in reversed(dirs.attempts):
        if (attempt.path / "scenario_config").is_dir():
            return attempt.path / "scenario_config"
    return None


def _run_ids(db_path: StoreRef) -> list[str]:
    with RecordingReader(db_path) as reader:
        return reader.run_ids()


def import_nemo_sync(
    db_path: StoreRef,
    results_dir: str | Path,
    *,
    run_id: str | None = None,
    again: bool = False,
) -> ImportReport:
    return asyncio.run(import_nemo(db_path, results_dir, run_id=run_id, again=again))
