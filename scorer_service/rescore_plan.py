"""Planning a rescore: every check that needs the run, made before anything is written.

A rescore must refuse bad input before it creates a scoring, so the checks
that read the run are made here, apart from the scoring lifecycle in
:mod:`scorer_service.rescore`: which run the reference names, which sessions
are scored (the chosen ids, or the latest attempt of every scenario), which
are skipped because they never ended, each session's effective scenario (the
run's frozen scenario with the config's overrides), overrides that name no
scenario of the run, and scenarios that need a judge when none is configured
(``scorer_service.judge_need``). It changes when the rules for what a rescore
may score change, not when the scoring does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from recordings.errors import StoreError
from recordings.models import SessionRecord
from recordings.reader import RecordingReader
from recordings.scenarios.model import Scenario
from recordings.selection import select_run
from scorer_service.config import ConfigError, ScoringConfig
from scorer_service.context import effective_scenario
from scorer_service.judge_need import require_judge


class RescoreError(StoreError):
    """A rescore request that cannot be carried out (bad session id, no sessions, ...)."""


@dataclass
class RescorePlan:
    """What a rescore scores: the sessions with their effective scenarios."""

    run_id: str
    run_options: dict[str, Any]
    sessions: list[tuple[SessionRecord, Scenario]]
    #: Session ids that never ended: not scored, listed in the summary.
    skipped: list[str]


def plan_rescore(
    reader: RecordingReader, run_ref: str, config: ScoringConfig, session_ids: Sequence[str]
) -> RescorePlan:
    """Resolve ``run_ref`` and check ``config`` against it; raise before anything is written."""
    run_id = select_run(reader, run_ref)
    run = reader.get_run(run_id)
    options = dict(run.options) if run is not None else {}
    docs = {s.scenario_name: s.scenario for s in reader.run_scenarios(run_id)}
    if session_ids:
        chosen = []
        for sid in session_ids:
            s = reader.session(sid)
            if s is None or s.run_id != run_id:
                raise RescoreError(f"run {run_id} has no session {sid!r}")
            chosen.append(s)
    else:
        chosen = sorted(reader.latest_attempts(run_id).values(), key=lambda s: s.scenario_name)
    planned, skipped = [], []
    for s in chosen:
        if s.ended_ns is None:
            skipped.append(s.session_id)
            continue
        doc = docs.get(s.scenario_name)
        if doc is None:
            raise RescoreError(f"run {run_id} has no frozen scenario {s.scenario_name!r}")
        source = f"run {run_id} scenario {s.scenario_name} (with overrides)"
        planned.append((s, effective_scenario(doc, config, source)))
    missing = set(config.overrides) - set(docs) - {"*"}
    if missing:
        raise ConfigError(f"overrides name scenarios not in run {run_id}: {sorted(missing)}")
    require_judge(config, [scenario for _, scenario in planned])
    return RescorePlan(run_id, options, planned, skipped)
