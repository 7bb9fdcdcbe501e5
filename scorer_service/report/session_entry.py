"""One session's entry in a run report: its verdict, what failed, the one-line reason.

Apart from :mod:`vae.scorer_service.report.data` (the run: which scoring is
shown, the sessions' order, comparisons) because this changes with what a
session shows: the signal rows (gating ones marked), the failing and unscored
signals with their reasons, the reason line (a mishearing first), timeline
markers, and the session's parts gathered by
:mod:`vae.scorer_service.report.session_data`. A session the shown scoring
holds no verdict for is ``unscored`` with its cause
(:func:`~vae.scorer_service.ledger.unscored.missing_cause`). A scenario built
to fail (``expect_fail``) keeps its verdict; its ``outcome`` says how the
gate counts it (``xfailed``, ``xpassed``: :mod:`vae.recordings.scenarios.expect`).
Values stay JSON-safe (the report data is also served as JSON).
"""

from __future__ import annotations

from typing import Any

from vae.recordings.models import EventKind, SessionRecord, Verdict
from vae.recordings.read.bot_errors import bot_errors
from vae.recordings.read.export import transcript
from vae.recordings.read.reader import RecordingReader
from vae.recordings.scenarios import expect
from vae.recordings.scenarios.line import describe_recorded
from vae.recordings.stop_reasons import is_finished
from vae.recordings.trials import split_trial
from vae.scorer_service import signals
from vae.scorer_service.ledger.aggregate import SessionOutcome
from vae.scorer_service.ledger.reasons import misheard, reason_line, reasons
from vae.scorer_service.ledger.unscored import missing_cause
from vae.scorer_service.report import session_data
from vae.scorer_service.report.traces_data import session_traces


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


def _unexpected(verdict: str, built_to_fail: bool) -> str:
    return expect.UNEXPECTED_PASS if built_to_fail and verdict == "passed" else ""


def session_entry(
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
    built_to_fail = expect.expects_failure(scenario)
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
        "expect_fail": built_to_fail,
        "outcome": expect.outcome(overall, built_to_fail),
        "reason": missing or _one_line(overall, failing) or _unexpected(overall, built_to_fail),
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
        "waterfall": session_traces(reader, session, turns),
    }
