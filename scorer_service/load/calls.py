"""One call of a load test, as recorded and scored: the unit every figure is made of.

A call is one attempt of a step's run (``vae load`` turns retries off: a
retried call would hide a failure and add load the step did not ask for). Its
latencies come from the timing scorer (the agent's reply onset after the
caller's end of turn, measured on the recorded audio), its verdict from the
gating composite ``is_successful``; the errors each bot reported (the
caller's belong to the harness, the agent's to the agent); its length in session time from the
clock record (on the virtual clock a call's wall time says nothing about the
agent), and the bridge process that served it from its recorded identity,
so harness figures can be told per process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vae.recordings.models import SessionRecord
from vae.recordings.read.bot_errors import bot_errors
from vae.recordings.read.reader import RecordingReader
from vae.recordings.stop_reasons import is_finished
from vae.scorer_service import signals
from vae.scorer_service.ledger.aggregate import SessionOutcome

#: Stop reasons that are how a call should end; every other one is an error of its kind.
NORMAL_ENDS = frozenset({"end_tool", "user_hang_up", "replay_finished", "recording_ended"})


@dataclass(frozen=True)
class Call:
    session_id: str
    scenario_name: str
    #: Wall clock, unix nanoseconds (the end: when the call's wall time was over).
    started_ns: int
    ended_ns: int
    #: The call's length in session time (the virtual clock's own; wall time on the real one).
    session_s: float
    stop_reason: str
    finished: bool
    #: ``is_successful``: "passed", "failed", "unscored", or "" when not scored.
    verdict: str
    #: (offset in the call, latency) in seconds, one per caller turn the agent answered.
    latencies: tuple[tuple[float, float], ...] = ()
    #: Time to the agent's first audio, seconds (None: it never spoke).
    ttfa_s: float | None = None
    #: Errors the agent reported (or the bridge reported of it) during the call.
    agent_errors: int = 0
    #: The same of the caller: part of the harness, so its first line is kept for the reason.
    caller_errors: tuple[str, ...] = ()
    #: Which bridge process served it ("" when not recorded).
    process: str = ""
    #: What the session recorded about its clock (tick lateness, dropped frames).
    clock: dict[str, Any] = field(default_factory=dict)

    @property
    def error_kind(self) -> str:
        """ "" for a call that ended as calls should, else what went wrong."""
        if self.stop_reason not in NORMAL_ENDS:
            return self.stop_reason or "unknown"
        if self.agent_errors:
            return "agent_error_reported"
        return "caller_error_reported" if self.caller_errors else ""


def process_label(bridge: dict[str, Any] | None) -> str:
    """A bridge process as a short label: ``worker 2``, ``bridge pid 123`` ("" unknown)."""
    if not bridge:
        return ""
    worker = bridge.get("worker")
    if worker is not None:
        return f"worker {worker}"
    return f"bridge pid {bridge.get('pid', '?')}"


def _latencies(outcome: SessionOutcome | None) -> tuple[tuple[float, float], ...]:
    score = None if outcome is None else outcome.get("timing.response_latency_p50_s")
    rows = [] if score is None else score.detail.get("latencies", [])
    out = []
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, dict) and "latency_s" in row:
            out.append((float(row.get("user_end_s", 0.0)), float(row["latency_s"])))
    return tuple(out)


def _verdict(outcome: SessionOutcome | None) -> str:
    score = None if outcome is None else outcome.get(signals.IS_SUCCESSFUL)
    return "" if score is None else str(score.verdict)


def calls_of_run(
    reader: RecordingReader, run_id: str, outcomes: list[SessionOutcome]
) -> list[Call]:
    """Every attempt of ``run_id`` as a :class:`Call`, with its scoring's figures, by start."""
    scored = {o.session_id: o for o in outcomes}
    bridges = reader.session_bridges(run_id)
    clocks = reader.session_clocks(run_id)
    calls = [
        _call(s, scored.get(s.session_id), bridges.get(s.session_id), clocks, reader)
        for s in reader.sessions(run_id)
    ]
    return sorted(calls, key=lambda c: (c.started_ns, c.session_id))


def _call(
    s: SessionRecord,
    outcome: SessionOutcome | None,
    bridge: dict[str, Any] | None,
    clocks: dict[str, dict[str, Any]],
    reader: RecordingReader,
) -> Call:
    clock = clocks.get(s.session_id, {})
    virtual = clock.get("clock") == "virtual"
    session_s = clock.get("session_s") if virtual else None
    ended = s.ended_ns or s.started_ns
    if virtual and isinstance(clock.get("wall_s"), int | float):
        # A virtual session records its end in session time: its wall end is start + wall_s.
        ended = s.started_ns + int(float(clock["wall_s"]) * 1e9)
    ttfa = None if outcome is None else outcome.get("timing.time_to_first_agent_audio_s")
    reason = s.stop_reason or ""
    errors = bot_errors(reader, s.session_id)
    return Call(
        session_id=s.session_id,
        scenario_name=s.scenario_name,
        started_ns=s.started_ns,
        ended_ns=ended,
        session_s=float(session_s) if isinstance(session_s, int | float) else s.duration_s,
        stop_reason=reason,
        finished=bool(reason) and is_finished(reason),
        verdict=_verdict(outcome),
        latencies=_latencies(outcome),
        ttfa_s=None if ttfa is None or ttfa.value is None else float(ttfa.value),
        agent_errors=sum(1 for line in errors if not line.startswith("user:")),
        caller_errors=tuple(line for line in errors if line.startswith("user:")),
        process=process_label(bridge),
        clock=clock,
    )
