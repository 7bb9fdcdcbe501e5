"""Reading the rows of OpenTelemetry in and out, the judge's calls, and recorded turns.

Free functions over a :class:`~vae.recordings.read.reader.RecordingReader`
(its ``conn``), so the reader class itself does not change with them.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from vae.recordings.models import Channel, EventKind, SessionRecord
from vae.recordings.traces.model import AgentSpan
from vae.recordings.traces.outgoing import LlmCall, TraceSpan, Turn, run_trace, scoring_trace
from vae.recordings.vad import VadSettings, spurts

if TYPE_CHECKING:
    from vae.recordings.read.reader import RecordingReader

#: The signal whose detail holds the judge call's usage (scorer_service/judge/usage.py).
JUDGE_SIGNAL = "JUDGE_PASSED"
_SPAN_COLS = (
    "run_id, session_id, trace_id, span_id, parent_span_id, name, kind, service, start_ns,"
    " end_ns, status, attributes_json, resource_json, matched_by, received_ns"
)


def _span(r: tuple[Any, ...]) -> AgentSpan:
    return AgentSpan(
        r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], int(r[8]), int(r[9]), r[10],
        json.loads(r[11]), json.loads(r[12]), r[13], int(r[14]),
    )  # fmt: skip


def agent_spans(
    reader: RecordingReader, run_id: str, session_id: str | None = None
) -> list[AgentSpan]:
    """The agent's spans of a run (or of one session), by start time."""
    if session_id is None:
        rows = reader.conn.execute(
            f"SELECT {_SPAN_COLS} FROM agent_spans WHERE run_id = ? ORDER BY start_ns, id",
            (run_id,),
        ).fetchall()
    else:
        rows = reader.conn.execute(
            f"SELECT {_SPAN_COLS} FROM agent_spans WHERE run_id = ? AND session_id = ?"
            " ORDER BY start_ns, id",
            (run_id, session_id),
        ).fetchall()
    return [_span(tuple(r)) for r in rows]


def span_matches(reader: RecordingReader, run_id: str) -> dict[str, Counter[str]]:
    """Per session id ("" for spans tied to none): how many spans each rule tied."""
    out: dict[str, Counter[str]] = {}
    for session_id, matched_by, n in reader.conn.execute(
        "SELECT COALESCE(session_id, ''), matched_by, COUNT(*) FROM agent_spans"
        " WHERE run_id = ? GROUP BY COALESCE(session_id, ''), matched_by",
        (run_id,),
    ).fetchall():
        out.setdefault(str(session_id), Counter())[str(matched_by)] += int(n)
    return out


def otel_exports(reader: RecordingReader, run_id: str) -> list[dict[str, Any]]:
    """Each export of vae's trace of the run (and of its scorings), oldest first."""
    rows = reader.conn.execute(
        "SELECT scoring_id, endpoint, spans, dropped, error, elapsed_s, created_ns"
        " FROM otel_exports WHERE run_id = ? ORDER BY created_ns, id",
        (run_id,),
    ).fetchall()
    return [
        {"scoring_id": r[0], "endpoint": r[1], "spans": int(r[2]), "dropped": int(r[3]),
         "error": r[4], "elapsed_s": float(r[5]), "created_ns": int(r[6])}
        for r in rows
    ]  # fmt: skip


def llm_calls(reader: RecordingReader, scoring_id: str) -> list[LlmCall]:
    """The judge's calls of a scoring, from ``JUDGE_PASSED``'s detail (its ``usage``)."""
    out = []
    for score in reader.scores(scoring_id):
        usage = score.detail.get("usage") if score.signal == JUDGE_SIGNAL else None
        if not isinstance(usage, dict) or not isinstance(usage.get("started_ns"), int):
            continue
        tokens_in, tokens_out = (usage.get(k) for k in ("input_tokens", "output_tokens"))
        out.append(
            LlmCall(scoring_id, score.session_id, "judge", str(usage.get("model") or ""),
                    int(usage["started_ns"]), int(usage.get("ended_ns") or usage["started_ns"]),
                    tokens_in if isinstance(tokens_in, int) else None,
                    tokens_out if isinstance(tokens_out, int) else None,
                    cached=bool(usage.get("cached")), error=score.error)
        )  # fmt: skip
    return sorted(out, key=lambda c: c.started_ns)


def recorded_turns(reader: RecordingReader, session: SessionRecord) -> list[Turn]:
    """The session's turns in order: talk spurts of each recorded channel (text turns in a
    text session); an agent's turn right after the caller's carries the silence between."""
    found: list[tuple[str, int, int]] = []
    if reader.session_mode(session.session_id).text or not _has_audio(reader, session):
        for e in reader.events(session.session_id, [EventKind.TRANSCRIPT]):
            if e.payload.get("kind", "spoken") == "spoken" and e.payload.get("is_final", True):
                found.append((str(e.side), e.bridge_ns, e.bridge_ns))
    else:
        for side, channel in (("user", Channel.USER), ("agent", Channel.AGENT)):
            audio = reader.read_channel(session.session_id, channel)
            if not audio.sample_rate or not audio.t0_ns:
                continue
            for sp in spurts(audio.samples, audio.sample_rate, VadSettings(merge_gap_s=0.4)):
                start = audio.t0_ns + int(sp.start * 1e9 / audio.sample_rate)
                end = audio.t0_ns + int(sp.end * 1e9 / audio.sample_rate)
                found.append((side, start, end))
    if session.ended_ns:  # what a bot said after the end is not a turn of the session
        end = session.ended_ns
        found = [(side, a, min(b, end)) for side, a, b in found if a <= end]
    found.sort(key=lambda t: (t[1], t[0]))
    out: list[Turn] = []
    last_user_end: int | None = None
    for side, start, end in found:
        latency = None
        if side == "agent" and out and out[-1].side == "user" and last_user_end is not None:
            latency = max(0.0, (start - last_user_end) / 1e9)
        out.append(Turn(side, start, end, latency))
        if side == "user":
            last_user_end = end
    return out


def _has_audio(reader: RecordingReader, session: SessionRecord) -> bool:
    row = reader.conn.execute(
        "SELECT COUNT(*) FROM audio_segments WHERE session_id = ?", (session.session_id,)
    ).fetchone()
    return bool(row and row[0])


def run_spans(
    reader: RecordingReader, run_id: str, verdicts: dict[str, str] | None = None
) -> list[TraceSpan]:
    """vae's trace of a run, built from what the store holds (:mod:`..traces.outgoing`)."""
    run = reader.get_run(run_id)
    if run is None:
        return []
    sessions = reader.sessions(run_id)
    turns = {s.session_id: recorded_turns(reader, s) for s in sessions if s.ended_ns}
    return run_trace(run, sessions, turns, verdicts)


def scoring_spans(reader: RecordingReader, scoring_id: str) -> list[TraceSpan]:
    """A scoring's spans: its evaluations, their ``gen_ai.evaluation.result`` events and
    the judge's calls."""
    scoring = reader.scoring(scoring_id)
    if scoring is None:
        return []
    return scoring_trace(scoring, reader.scores(scoring_id), llm_calls(reader, scoring_id))
