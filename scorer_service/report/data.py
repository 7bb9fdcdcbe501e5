"""Everything a run report shows, gathered from the store as plain data.

``report_data`` is also what ``GetReport`` can return as JSON, so it holds only
JSON-safe values. The scoring shown is the one asked for, else the run's
current scoring (newest complete, not superseded); a run with no scoring still
reports its recordings, with every verdict "not scored". A session the scoring
shown holds no verdict for (one that never ended, which a rescore skips; an
imported attempt that crashed; one the scoring never reached) is ``unscored``
with its cause, never left out of what did not pass. Sessions come failing
first (then those built to fail that passed, unscored, failed as expected,
passed, not applicable), each with a one-line reason, so the first screen
answers "what failed and why". With a baseline run the data
also holds the run-vs-run comparison (:mod:`vae.scorer_service.compare.runs`).
Each session's entry is :mod:`vae.scorer_service.report.session_entry`'s.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from vae import __version__
from vae.recordings.cost.prices import PriceTable
from vae.recordings.models import ScoringRecord
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.replay_links import run_source
from vae.recordings.read.selection import select_run
from vae.recordings.scenarios import expect
from vae.scorer_service.compare.config import bots
from vae.scorer_service.compare.runs import compare_with_reader
from vae.scorer_service.ledger import scorings as ledger
from vae.scorer_service.ledger.scorings import (
    compare,
    current_scoring,
    resolve_scoring,
    session_outcomes,
)
from vae.scorer_service.report.audio import session_audio_uri, write_session_audio
from vae.scorer_service.report.extras_data import report_extras
from vae.scorer_service.report.sections.labels import labels_block
from vae.scorer_service.report.sections.redaction import redaction_block
from vae.scorer_service.report.session_entry import session_entry

#: Order of sessions in the report by outcome: what needs attention first.
OUTCOME_ORDER = (*expect.ORDER, "not scored")


def _iso(ns: int | None) -> str:
    if not ns:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ns / 1e9))


def _compare(reader: RecordingReader, a: ScoringRecord, b: ScoringRecord) -> dict[str, Any]:
    flips, summary = compare(reader, a, b)
    cmp = compare_with_reader(
        reader, a.run_id, b.run_id, scoring_a=a.scoring_id, scoring_b=b.scoring_id
    )
    return {
        **summary,
        "comparison": cmp.as_dict(),
        "flips": [
            {"session_id": f.session_id, "scenario_name": f.scenario_name, "signal": f.signal,
             "a": str(f.verdict_a) if f.verdict_a else "absent",
             "b": str(f.verdict_b) if f.verdict_b else "absent",
             "value_a": f.value_a, "value_b": f.value_b}
            for f in flips
        ],
    }  # fmt: skip


def _audio(reader: RecordingReader, sid: str, include: bool, folder: Path | None) -> str:
    if folder is not None:
        name = write_session_audio(reader, sid, folder)
        return f"{folder.name}/{name}" if name else ""
    return session_audio_uri(reader, sid) if include else ""


def report_data(
    reader: RecordingReader,
    run_id: str,
    scoring_id: str | None = None,
    compare_scoring_id: str | None = None,
    *,
    include_audio: bool = True,
    audio_dir: Path | None = None,
    baseline_run: str | None = None,
    baseline_scoring: str | None = None,
    prices: PriceTable | None = None,
) -> dict[str, Any]:
    """The report's content for ``run_id`` (exact id or unique prefix).

    ``audio_dir``: write each session's audio there and link it by relative
    path (the folder must sit beside the HTML) instead of embedding it.
    ``baseline_run``: also compare this run against that one, per scenario.
    ``prices``: a price table; then each session, the run and the scoring are costed.
    """
    run_id = select_run(reader, run_id)
    run = reader.get_run(run_id)
    assert run is not None
    scoring = resolve_scoring(reader, scoring_id) if scoring_id else current_scoring(reader, run_id)
    if scoring is not None and scoring.run_id != run_id:
        raise ledger.ScoringMismatchError(
            f"scoring_id: scoring {scoring.scoring_id} belongs to run {scoring.run_id}, "
            f"not {run_id}"
        )
    outcomes = {o.session_id: o for o in session_outcomes(reader, scoring)} if scoring else {}
    scenarios = {s.scenario_name: s for s in reader.run_scenarios(run_id)}
    sessions = []
    for s in sorted(reader.latest_attempts(run_id).values(), key=lambda s: s.scenario_name):
        sc = scenarios.get(s.scenario_name)
        doc = {**(sc.scenario if sc else {}), "domain": sc.domain if sc else ""}
        audio = _audio(reader, s.session_id, include_audio, audio_dir)
        outcome = outcomes.get(s.session_id)
        sessions.append(session_entry(reader, s, outcome, doc, audio, scoring is not None))
    sessions.sort(key=lambda x: (OUTCOME_ORDER.index(x["outcome"]), x["scenario_name"]))
    comparison = None
    if compare_scoring_id:
        other = resolve_scoring(reader, compare_scoring_id)
        if scoring is None:
            raise ledger.ScoringMismatchError(
                "compare_scoring_id: a comparison needs a scoring to compare against"
            )
        comparison = _compare(reader, other, scoring)
    baseline = None
    if baseline_run:
        baseline = compare_with_reader(
            reader, baseline_run, run_id, scoring_a=baseline_scoring,
            scoring_b=scoring.scoring_id if scoring else None,
        ).as_dict()  # fmt: skip
    all_sessions = reader.sessions(run_id)
    extras = report_extras(reader, run_id, scoring, prices, sessions)  # traces and cost
    return {
        "generated_at": _iso(time.time_ns()),
        "vae_version": __version__,
        "run": {
            "run_id": run.run_id,
            "created": _iso(run.created_ns),
            "finished": _iso(run.finished_ns),
            "status": str(run.status),
            "source": run.source,
            "replayed_from": run_source(reader, run_id),
            "recorded_with": run.vae_version,
            "options": run.options,
            "modality": str(run.options.get("modality", "audio")),
            "clock": str(run.options.get("clock", "real")),
            "tags": run.tags,
            "bots": {"user": bots(all_sessions, "user"), "agent": bots(all_sessions, "agent")},
            "scenarios": len(scenarios),
        },
        "scoring": None
        if scoring is None
        else {
            "scoring_id": scoring.scoring_id,
            "created": _iso(scoring.created_ns),
            "status": scoring.status,
            "mode": scoring.mode,
            "judge_model": scoring.judge_model,
            "prompt_hash": scoring.prompt_hash,
            "label": scoring.config.get("label", ""),
            "config": scoring.config,
        },
        "summary": dict(scoring.summary) if scoring else {},
        "sessions": sessions,
        "latencies": [x for s in sessions for x in s["latencies"]],
        "compare": comparison,
        "baseline": baseline,
        "labels": labels_block(reader, scoring),
        "redaction": redaction_block(reader, run_id),
        **extras,
    }
