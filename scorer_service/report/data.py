"""Everything a run report shows, gathered from the store as plain data.

``report_data`` is also what ``GetReport`` can return as JSON, so it holds only
JSON-safe values. The scoring shown is the one asked for, else the run's
current scoring (newest complete, not superseded); a run with no scoring still
reports its recordings, with every verdict "not scored".
"""

from __future__ import annotations

import time
from typing import Any

from recordings.export import transcript
from recordings.models import Channel, EventKind, ScoringRecord, SessionRecord, Verdict
from recordings.reader import RecordingReader
from recordings.replay_links import run_source
from recordings.selection import select_run
from scorer_service import signals
from scorer_service.aggregate import SessionOutcome
from scorer_service.ledger import compare, current_scoring, resolve_scoring, session_outcomes
from scorer_service.report.audio import session_audio_uri
from scorer_service.report.reasons import reasons
from scorer_service.timing.metrics import merge
from scorer_service.timing.vad import make_detector
from vae import __version__

#: Gaps shorter than this inside one side's speech are drawn as one span.
MERGE_GAP_S = 0.4


def _iso(ns: int | None) -> str:
    if not ns:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ns / 1e9))


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _bots(sessions: list[SessionRecord]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"user": [], "agent": []}
    for s in sessions:
        for side, info in (("user", s.user_bot), ("agent", s.agent_bot)):
            name = " ".join(str(info.get(k, "")) for k in ("name", "version")).strip()
            if name and name not in out[side]:
                out[side].append(name)
    return out


def _speech_spans(reader: RecordingReader, session_id: str) -> dict[str, list[list[float]]]:
    detector = make_detector("energy", {})
    spans: dict[str, list[list[float]]] = {}
    for side, channel in (("user", Channel.USER), ("agent", Channel.AGENT)):
        audio = reader.read_channel(session_id, channel)
        found = merge(detector.detect(audio.samples, audio.sample_rate), MERGE_GAP_S)
        spans[side] = [[round(s, 3), round(e, 3)] for s, e in found]
    return spans


def _markers(
    reader: RecordingReader, session: SessionRecord, outcome: SessionOutcome | None
) -> list[dict[str, Any]]:
    t0 = session.started_ns
    markers: list[dict[str, Any]] = []
    kinds = [EventKind.TOOL_CALL, EventKind.END_CONVERSATION]
    for e in reader.events(session.session_id, kinds):
        t = round((e.bridge_ns - t0) / 1e9, 3)
        if e.kind is EventKind.TOOL_CALL:
            label = f"{e.side}: {e.payload.get('name', '?')}"
            if e.payload.get("error"):
                label += f" (error: {e.payload['error']})"
            markers.append({"t_s": t, "kind": "tool", "label": label})
        else:
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
        }
    return rows


def _session(
    reader: RecordingReader,
    session: SessionRecord,
    outcome: SessionOutcome | None,
    domain: str,
    gating: list[str],
    include_audio: bool,
) -> dict[str, Any]:
    rows = _signal_rows(outcome, gating)
    overall = rows.get(signals.IS_SUCCESSFUL, {}).get("verdict", "not scored")
    # Gating signals first: they decide the result; the others only inform.
    failing = [
        {
            "signal": name,
            "verdict": row["verdict"],
            "reasons": row["reasons"],
            "gating": row["gating"] or name == signals.STALLED,
        }
        for name, row in rows.items()
        if row["verdict"] in (Verdict.FAILED, Verdict.UNSCORED) and name not in signals.COMPOSITES
    ]
    failing.sort(key=lambda f: not f["gating"])
    latency = outcome.get("timing.response_latency_p50_s") if outcome else None
    rows_lat = _list(latency.detail.get("latencies") if latency else None)
    return {
        "session_id": session.session_id,
        "scenario_name": session.scenario_name,
        "domain": domain,
        "attempt": session.attempt,
        "status": str(session.status),
        "verdict": overall,
        "stop_reason": session.stop_reason or "",
        "clean_exit": session.clean_exit,
        "duration_s": round(session.duration_s, 2),
        "user_turns": session.user_turns,
        "agent_turns": session.agent_turns,
        "signals": rows,
        "failing": failing,
        "latencies": [float(r["latency_s"]) for r in rows_lat if isinstance(r, dict)],
        "transcript": transcript(reader, session.session_id),
        "spans": _speech_spans(reader, session.session_id),
        "markers": _markers(reader, session, outcome),
        "audio": session_audio_uri(reader, session.session_id) if include_audio else "",
    }


def _compare(reader: RecordingReader, a: ScoringRecord, b: ScoringRecord) -> dict[str, Any]:
    flips, summary = compare(reader, a, b)
    return {
        **summary,
        "flips": [
            {
                "session_id": f.session_id,
                "scenario_name": f.scenario_name,
                "signal": f.signal,
                "a": str(f.verdict_a) if f.verdict_a else "absent",
                "b": str(f.verdict_b) if f.verdict_b else "absent",
                "value_a": f.value_a,
                "value_b": f.value_b,
            }
            for f in flips
        ],
    }


def report_data(
    reader: RecordingReader,
    run_id: str,
    scoring_id: str | None = None,
    compare_scoring_id: str | None = None,
    *,
    include_audio: bool = True,
) -> dict[str, Any]:
    """The report's content for ``run_id`` (exact id or unique prefix)."""
    run_id = select_run(reader, run_id)
    run = reader.get_run(run_id)
    assert run is not None
    scoring = resolve_scoring(reader, scoring_id) if scoring_id else current_scoring(reader, run_id)
    if scoring is not None and scoring.run_id != run_id:
        raise ValueError(f"scoring {scoring.scoring_id} belongs to run {scoring.run_id}")
    outcomes = {o.session_id: o for o in session_outcomes(reader, scoring)} if scoring else {}
    scenarios = {s.scenario_name: s for s in reader.run_scenarios(run_id)}
    shown = sorted(reader.latest_attempts(run_id).values(), key=lambda s: s.scenario_name)
    sessions = []
    for s in shown:
        sc = scenarios.get(s.scenario_name)
        gating = [str(x) for x in _list(sc.scenario.get("success_signals"))] if sc else []
        domain = sc.domain if sc else ""
        sessions.append(
            _session(reader, s, outcomes.get(s.session_id), domain, gating, include_audio)
        )
    comparison = None
    if compare_scoring_id:
        other = resolve_scoring(reader, compare_scoring_id)
        if scoring is None:
            raise ValueError("a comparison needs a scoring to compare against")
        comparison = _compare(reader, other, scoring)
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
            "tags": run.tags,
            "bots": _bots(reader.sessions(run_id)),
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
        },
        "summary": dict(scoring.summary) if scoring else {},
        "sessions": sessions,
        "latencies": [x for s in sessions for x in s["latencies"]],
        "compare": comparison,
    }
