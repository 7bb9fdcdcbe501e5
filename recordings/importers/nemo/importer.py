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

This module surveys the directory and owns the run — its row, its files,
its status and the end of its first scoring; each scenario directory is
written by :mod:`vae.recordings.importers.nemo.scenario_writes`.
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
)
from vae.recordings.importers.nemo.report import ImportReport
from vae.recordings.importers.nemo.run_args import created_ns as _created_ns
from vae.recordings.importers.nemo.run_args import options as _options
from vae.recordings.importers.nemo.scenario_writes import SOURCE, RunState, import_scenario
from vae.recordings.importers.nemo.scores import summary_of
from vae.recordings.models import ArtifactRecord, RunRecord, RunStatus
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.writer import RecordingWriter, open_writer

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
        state = RunState(rid, created, f"{rid}.nemo-original")
        try:
            for name, text in src.run_files.items():
                await writer.add_artifact(ArtifactRecord(rid, name, text))
            for ordinal, dirs in enumerate(src.scenarios):
                if writer.failure is not None:  # stop at once: nothing more can be stored
                    raise StorageError(f"import stopped: {writer.failure}")
                report.scenarios.append(await import_scenario(writer, state, ordinal, dirs))
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


async def _fail(writer: RecordingWriter, state: RunState, exc: BaseException) -> None:
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
