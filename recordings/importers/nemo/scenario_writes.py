"""Writing one imported scenario: its frozen scenario, its attempts and the framework's verdicts.

:mod:`vae.recordings.importers.nemo.importer` surveys the results directory
and owns the run; this module writes what one scenario directory holds,
through the store's single writer: the scenario rebuilt from
``scenario_config/`` (frozen with the run, its raw files kept as artifacts),
each attempt as a session (read by
:mod:`vae.recordings.importers.nemo.session`), earlier attempts marked
superseded, and the framework's own verdicts as the run's first scoring —
only for a last attempt that ran to a finished end. :class:`RunState` carries
what the run learns across scenarios.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from vae.recordings.importers.nemo.attempt_records import AttemptData
from vae.recordings.importers.nemo.layout import ScenarioDirs, session_id_for
from vae.recordings.importers.nemo.report import AttemptReport, ScenarioReport
from vae.recordings.importers.nemo.scenario import load_scenario
from vae.recordings.importers.nemo.scores import original_scores
from vae.recordings.importers.nemo.session import read_attempt
from vae.recordings.models import (
    ArtifactRecord,
    RunScenario,
    ScoreRecord,
    ScoringRecord,
    SessionRecord,
    SessionStatus,
)
from vae.recordings.stop_reasons import is_finished
from vae.recordings.write.writer import RecordingWriter

#: The ``source`` of an imported run, and of its first scoring's config.
SOURCE = "import:nemo"


@dataclass
class RunState:
    """What the import learns across scenarios: ends, verdicts, unfinished ones."""

    run_id: str
    created_ns: int
    scoring_id: str
    scoring_created: bool = False
    ends: list[int] = field(default_factory=list)
    scores: list[ScoreRecord] = field(default_factory=list)
    #: Scenarios whose last attempt crashed or never ended.
    unfinished: list[str] = field(default_factory=list)


async def import_scenario(
    writer: RecordingWriter, state: RunState, ordinal: int, dirs: ScenarioDirs
) -> ScenarioReport:
    """Write the scenario ``dirs`` (the run's ``ordinal``-th) and every attempt of it."""
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
    """Write one attempt as a session; return its status as the report shows it."""
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
