"""Planning a rescore: every check that needs the run, made before anything is written.

A rescore must refuse bad input before it creates a scoring, so the checks
that read the run are made here, apart from the scoring lifecycle in
:mod:`vae.scorer_service.scoring.rescore`: which run the reference names, which sessions
are scored (the chosen ids, or the latest attempt of every scenario), which
are skipped because they never ended, each session's effective scenario (the
run's frozen scenario with the config's overrides), overrides that name no
scenario of the run, and scenarios that need a judge when none is configured
(``vae.scorer_service.judge.need``). It changes when the rules for what a rescore
may score change, not when the scoring does.

A rescore of a subset — chosen sessions (``--session``) or some of the
scorers (``--only``) — never becomes the run's current scoring unless asked
(``make_current``): the run keeps its complete scoring as the one reports
show. :func:`rescore_scope` says which, and is stored in the summary
(``scope``) where :func:`vae.scorer_service.ledger.scorings.current_scoring` reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vae.recordings.errors import StoreError
from vae.recordings.models import SessionRecord
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.selection import select_run
from vae.recordings.scenarios.model import Scenario
from vae.scorer_service.config import ConfigError, ScoringConfig
from vae.scorer_service.judge.need import require_judge
from vae.scorer_service.overrides import effective_scenario
from vae.scorer_service.scoring.registry import SCORER_NAMES


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


def rescore_scope(
    config: ScoringConfig, session_ids: Sequence[str], *, make_current: bool, mode: str
) -> dict[str, Any]:
    """The summary's ``scope``: ``subset``, what it was limited to, ``current``.

    Raises :class:`ConfigError` for ``overwrite`` on a subset without
    ``make_current``: overwrite supersedes the run's other scorings, which
    would leave a partial scoring as the only one shown.
    """
    left_out = sorted(set(SCORER_NAMES) - set(config.scorers)) if config.scorers else []
    subset = bool(session_ids) or bool(left_out)
    if subset and mode == "overwrite" and not make_current:
        raise ConfigError(
            "--overwrite with --session/--only would make a partial scoring the run's only "
            "current one; add --make-current (RPC: make_current) if that is what you mean"
        )
    return {
        "subset": subset,
        "sessions": list(session_ids),
        "scorers_left_out": left_out,
        "current": not subset or make_current,
    }
