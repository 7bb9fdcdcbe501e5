"""vae's own trace of a run and of a scoring, as plain span records.

One trace per run (its id from :mod:`.ids`): a root span for the run, a span
per session (scenario, trial, attempt, stop reason, and the verdict when the
same command scored it), and under each session a span per recorded turn
(who spoke, start, end, and for an agent's turn the latency after the
caller's). A scoring adds a span under the run with one span per session it
scored; each of those carries one ``gen_ai.evaluation.result`` event per
signal (``gen_ai.evaluation.name``, ``.score.value``, ``.score.label``,
``.explanation``, as OpenTelemetry's GenAI semantic conventions name them)
and a child span per judge call (``chat MODEL`` with ``gen_ai.*`` model and
token attributes).

The records here match ``vae.otel.spans.SpanLike``; the store imports no
OpenTelemetry library and this module does no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vae.recordings.models import RunRecord, ScoreRecord, ScoringRecord, SessionRecord
from vae.recordings.traces import ids

#: Characters kept of an explanation (a judge's reason) on an evaluation event.
MAX_EXPLANATION = 500


@dataclass(frozen=True, slots=True)
class TraceEvent:
    name: str
    time_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TraceSpan:
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)
    events: tuple[TraceEvent, ...] = ()
    kind: str = "internal"
    status: str = ""


@dataclass(frozen=True, slots=True)
class Turn:
    """A recorded turn: who spoke, when (unix ns on the bridge clock), and for an agent's
    turn that follows the caller's, the silence between them."""

    side: str
    start_ns: int
    end_ns: int
    latency_s: float | None = None


@dataclass(frozen=True, slots=True)
class LlmCall:
    """One LLM call vae made (the judge's), with what its response said it used."""

    scoring_id: str
    session_id: str
    role: str
    model: str
    started_ns: int
    ended_ns: int
    input_tokens: int | None = None
    output_tokens: int | None = None
    provider: str = ""
    cached: bool = False
    error: str = ""


def run_trace(
    run: RunRecord,
    sessions: Sequence[SessionRecord],
    turns: dict[str, list[Turn]],
    verdicts: dict[str, str] | None = None,
) -> list[TraceSpan]:
    """The run's spans: root, sessions, turns. ``verdicts``: session id -> verdict."""
    trace = ids.run_trace_id(run.run_id)
    root = ids.run_span_id(run.run_id)
    ends = [s.ended_ns or s.started_ns for s in sessions]
    run_end = max([run.finished_ns or run.created_ns, *ends])
    out = [
        TraceSpan(
            trace, root, "", "vae.run", run.created_ns, run_end,
            {"vae.run.id": run.run_id, "vae.run.status": str(run.status),
             "vae.run.sessions": len(sessions)},
            status="ok" if str(run.status) == "completed" else "error",
        )
    ]  # fmt: skip
    for s in sessions:
        span = ids.session_span_id(s.session_id)
        scenario, _, trial = s.scenario_name.partition("#")
        attributes: dict[str, Any] = {
            "vae.session.id": s.session_id,
            "vae.scenario": scenario,
            "vae.trial": int(trial) if trial.isdigit() else 0,
            "vae.attempt": s.attempt,
            "vae.stop_reason": s.stop_reason or "",
            "vae.clean_exit": s.clean_exit,
            "vae.superseded": bool(s.superseded_reason),
        }
        if verdicts is not None and s.session_id in verdicts:
            attributes["vae.verdict"] = verdicts[s.session_id]
        end = s.ended_ns or s.started_ns
        out.append(TraceSpan(trace, span, root, "vae.session", s.started_ns, end, attributes))
        for i, t in enumerate(turns.get(s.session_id, [])):
            turn_attributes: dict[str, Any] = {"vae.turn.index": i, "vae.turn.side": t.side}
            if t.latency_s is not None:
                turn_attributes["vae.turn.latency_s"] = round(t.latency_s, 3)
            out.append(
                TraceSpan(trace, ids.span_id(s.session_id, "turn", str(i)), span, "vae.turn",
                          t.start_ns, max(t.end_ns, t.start_ns), turn_attributes)
            )  # fmt: skip
    return out


def _event(score: ScoreRecord, at_ns: int) -> TraceEvent:
    attributes: dict[str, Any] = {
        "gen_ai.evaluation.name": score.signal,
        "gen_ai.evaluation.score.label": str(score.verdict),
    }
    if score.value is not None:
        attributes["gen_ai.evaluation.score.value"] = float(score.value)
    reason = score.error or str(score.detail.get("reason") or score.detail.get("cause") or "")
    if reason:
        attributes["gen_ai.evaluation.explanation"] = reason[:MAX_EXPLANATION]
    return TraceEvent("gen_ai.evaluation.result", at_ns, attributes)


def scoring_trace(
    scoring: ScoringRecord,
    scores: Sequence[ScoreRecord],
    calls: Sequence[LlmCall] = (),
) -> list[TraceSpan]:
    """A scoring's spans, under its run's root span in the run's trace."""
    trace = ids.run_trace_id(scoring.run_id)
    span = ids.span_id(scoring.scoring_id, "scoring")
    end = scoring.finished_ns or max([scoring.created_ns, *(c.ended_ns for c in calls)])
    by_session: dict[str, list[ScoreRecord]] = {}
    for score in scores:
        by_session.setdefault(score.session_id, []).append(score)
    calls_of: dict[str, list[LlmCall]] = {}
    for call in calls:
        calls_of.setdefault(call.session_id, []).append(call)
    out = [
        TraceSpan(
            trace, span, ids.run_span_id(scoring.run_id), "vae.scoring", scoring.created_ns, end,
            {"vae.scoring.id": scoring.scoring_id, "vae.scoring.status": scoring.status,
             "vae.run.id": scoring.run_id, "vae.scoring.judge_model": scoring.judge_model},
        )
    ]  # fmt: skip
    for session_id, rows in sorted(by_session.items()):
        own = calls_of.get(session_id, [])
        start = min([c.started_ns for c in own], default=scoring.created_ns)
        stop = max([c.ended_ns for c in own], default=end)
        child = ids.span_id(scoring.scoring_id, "session", session_id)
        events = tuple(_event(r, stop) for r in sorted(rows, key=lambda r: r.signal))
        out.append(
            TraceSpan(trace, child, span, "vae.evaluation", start, max(stop, start),
                      {"vae.session.id": session_id}, events)
        )  # fmt: skip
        for i, call in enumerate(own):
            out.append(_call_span(trace, child, scoring.scoring_id, session_id, i, call))
    return out


def _call_span(
    trace: str, parent: str, scoring_id: str, session_id: str, i: int, call: LlmCall
) -> TraceSpan:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": call.provider or "openai",
        "gen_ai.request.model": call.model,
        "vae.llm.role": call.role,
        "vae.llm.cached": call.cached,
    }
    if call.input_tokens is not None:
        attributes["gen_ai.usage.input_tokens"] = call.input_tokens
    if call.output_tokens is not None:
        attributes["gen_ai.usage.output_tokens"] = call.output_tokens
    if call.error:
        attributes["error.type"] = call.error[:200]
    return TraceSpan(
        trace, ids.span_id(scoring_id, "call", session_id, str(i)), parent,
        f"chat {call.model}", call.started_ns, max(call.ended_ns, call.started_ns), attributes,
        kind="client", status="error" if call.error else "",
    )  # fmt: skip
