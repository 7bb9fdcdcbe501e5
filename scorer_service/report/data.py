"""Everything a run report shows, gathered from the store as plain data.

``report_data`` is also what ``GetReport`` can return as JSON, so it holds only
JSON-safe values. The scoring shown is the one asked for, else the run's
current scoring (newest complete, not superseded); a run with no scoring still
reports its recordings, with every verdict "not scored". A session the scoring
shown holds no verdict for (one that never ended, which a rescore skips; an
imported attempt that crashed; one the scoring never reached) is ``unscored``
with its cause, never left out of what did not pass. Sessions come failing
first (then unscored, passed, not applicable), each with a one-line reason, so
the first screen answers "what failed and why". With a baseline run the data
also holds the run-vs-run comparison (:mod:`vae.scorer_service.compare.runs`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from vae import __version__
from vae.recordings.models import EventKind, ScoringRecord, SessionRecord, Verdict
from vae.recordings.read.bot_errors import bot_errors
from vae.recordings.read.export import transcript
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.replay_links import run_source
from vae.recordings.read.selection import select_run
from vae.recordings.scenarios.line import describe_recorded
from vae.recordings.stop_reasons import is_finished, unfinished_cause
from vae.recordings.trials import split_trial
from vae.scorer_service import signals
from vae.scorer_service.compare.config import bots
from vae.scorer_service.compare.runs import compare_with_reader
from vae.scorer_service.ledger import scorings as ledger
from vae.scorer_service.ledger.aggregate import SessionOutcome
from vae.scorer_service.ledger.reasons import misheard, reason_line, reasons
from vae.scorer_service.ledger.scorings import (
    compare,
    current_scoring,
    resolve_scoring,
    session_outcomes,
)
from vae.scorer_service.report import session_data
from vae.scorer_service.report.audio import session_audio_uri, write_session_audio
from vae.scorer_service.report.labels_html import labels_block
from vae.scorer_service.report.redaction_html import redaction_block

#: Order of sessions in the report: what needs attention first.
VERDICT_ORDER = ("failed", "unscored", "passed", "not_applicable", "not scored")


def _iso(ns: int | None) -> str:
    if not ns:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ns / 1e9))


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _markers(
    reader: RecordingReader, session: SessionRecord, outcome: SessionOutcome | None
) -> list[dict[str, Any]]:
    t0 = session.started_ns
    markers: list[dict[str, Any]] = []
    for e in reader.events(session.session_id, [EventKind.END_CONVERSATION]):
        t = round((e.bridge_ns - t0) / 1e9, 3)
        markers.append({"t_s": t, "kind": "end", "label": f"{e.payload.get('kind', 'end')}"})
    if outcome is not None:
        yield_score = outcome.get("timing.yield_rate")
        for b in _list(yield_score.detail.get("barge_ins") if yield_score else None):
            if isinstance(b, dict) and "user_start_s" in b:
                yielded = "yielded" if b.get("yielded") else "did not yield"
                markers.append(
                    {"t_s": b["user_start_s"], "kind": "barge_in",
                     "label": f"user barge-in; agent {yielded} after "
                              f"{b.get('yield_latency_s', 0):.2f} s"}
                )  # fmt: skip
        inter = outcome.get("timing.agent_interruptions")
        for t in _list(inter.detail.get("at_s") if inter else None):
            if isinstance(t, int | float):
                markers.append({"t_s": t, "kind": "interruption", "label": "agent interrupts"})
    return sorted(markers, key=lambda m: m["t_s"])


def _signal_rows(outcome: SessionOutcome | None, gating: list[str]) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    if outcome is None:
        return rows
    for name in (*signals.SUCCESS_SIGNALS, *signals.COMPOSITES, signals.STALLED):
        s = outcome.get(name)
        if s is None:
            continue
        rows[name] = {
            "verdict": str(s.verdict),
            "value": s.value,
            "gating": name in gating,
            "reasons": reasons(s),
            "misheard": misheard(s),
        }
    return rows


def _quiet(name: str, row: dict[str, Any]) -> bool:  # nothing heard-reported: no failure
    opt_in = (signals.HEARD_CORRECTLY, signals.DTMF_RECEIVED)
    return name in opt_in and not row["gating"] and row["verdict"] == "unscored"


def _failing(rows: dict[str, Any]) -> list[dict[str, Any]]:
    # Gating signals first: they decide the result; the others only inform.
    failing = [
        {"signal": name, "verdict": row["verdict"], "reasons": row["reasons"],
         "gating": row["gating"] or name == signals.STALLED, "misheard": row["misheard"]}
        for name, row in rows.items()
        if row["verdict"] in (Verdict.FAILED, Verdict.UNSCORED)
        and name not in signals.COMPOSITES and not _quiet(name, row)
    ]  # fmt: skip
    failing.sort(key=lambda f: (not f["gating"], f["verdict"] != Verdict.FAILED))
    return failing


def _one_line(verdict: str, failing: list[dict[str, Any]]) -> str:
    if verdict not in ("failed", "unscored"):
        return ""
    failing = sorted(failing, key=lambda f: not (f["gating"] and f.get("misheard")))  # it first
    for f in failing:
        if f["gating"] and (f["verdict"] == verdict or verdict == "failed"):
            return reason_line(f["signal"], f["reasons"], f.get("misheard") or "", f["verdict"])
    return ""


def missing_cause(session: SessionRecord) -> str:
    """Why a scoring holds no verdict for ``session`` (the unscored block's cause)."""
    if session.ended_ns is None:
        return unfinished_cause(None)  # "unfinished: never ended", as rescore counts it
    if not is_finished(session.stop_reason):
        return unfinished_cause(session.stop_reason)  # e.g. an imported crashed attempt
    return "not scored by this scoring"


def _session(
    reader: RecordingReader,
    session: SessionRecord,
    outcome: SessionOutcome | None,
    scenario: dict[str, Any],
    audio: str,
    scored: bool = False,
) -> dict[str, Any]:
    """One session's report data; ``scored``: a scoring is shown (else "not scored")."""
    gating = [str(x) for x in _list(scenario.get("success_signals"))]
    rows = _signal_rows(outcome, gating)
    missing = missing_cause(session) if scored and outcome is None else ""
    overall = rows.get(signals.IS_SUCCESSFUL, {}).get(
        "verdict", "unscored" if missing else "not scored"
    )
    failing = _failing(rows)
    turns = session_data.turn_latencies(reader, session, outcome)
    lat = [t["latency_s"] for t in turns]
    mode = reader.session_mode(session.session_id)
    base, trial = split_trial(session.scenario_name)
    tools = session_data.tool_calls(reader, session)
    end_s = max([session.duration_s, *(t["t_s"] for t in tools)]) or 1.0
    return {
        "session_id": session.session_id,
        "scenario_name": session.scenario_name,
        "scenario": base,
        "trial": trial or 0,
        "domain": str(scenario.get("domain", "")),
        "tags": [str(t) for t in _list(scenario.get("tags"))],
        "attempt": session.attempt,
        "status": str(session.status),
        "verdict": overall,
        "reason": missing or _one_line(overall, failing),
        "stop_reason": session.stop_reason or "",
        "stop_detail": session.stop_detail,
        "finished": is_finished(session.stop_reason),
        "bot_errors": bot_errors(reader, session.session_id),
        "clean_exit": session.clean_exit,
        "duration_s": round(session.duration_s, 2),
        "end_s": round(end_s, 3),
        "user_turns": session.user_turns,
        "agent_turns": session.agent_turns,
        "signals": rows,
        "failing": failing,
        "failing_signals": sorted({f["signal"] for f in failing if f["verdict"] == "failed"}),
        "latencies": lat,
        "latency_p50_s": sorted(lat)[(len(lat) - 1) // 2] if lat else None,
        "turns": turns,
        "transcript": transcript(reader, session.session_id),
        **session_data.audio_lanes(reader, session, end_s),
        "markers": _markers(reader, session, outcome),
        "tools": tools,
        "db": session_data.db_states(reader, session, outcome),
        "assertions": session_data.assertions(outcome),
        "heard": session_data.said_and_heard(outcome),
        "transcribed": session_data.transcribed(reader, outcome),
        "audio": audio,
        "modality": mode.modality,
        "clock": mode.clock,
        "caller": reader.session_caller(session.session_id),
        "line": describe_recorded(reader.session_line(session.session_id)),
    }


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
) -> dict[str, Any]:
    """The report's content for ``run_id`` (exact id or unique prefix).

    ``audio_dir``: write each session's audio there and link it by relative
    path (the folder must sit beside the HTML) instead of embedding it.
    ``baseline_run``: also compare this run against that one, per scenario.
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
        sessions.append(_session(reader, s, outcome, doc, audio, scoring is not None))
    sessions.sort(key=lambda x: (VERDICT_ORDER.index(x["verdict"]), x["scenario_name"]))
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
    }
