"""Choosing runs and deciding what a resume re-runs.

Run ids are readable timestamps (``2024-06-01T10-22-33``, with ``-2``, ``-3``
... appended if taken) unless the user names the run. Every ``--run`` accepts
an exact id or a unique prefix such as a date.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Iterable
from dataclasses import dataclass

from vae.recordings.errors import AmbiguousRunError, RunNotFoundError
from vae.recordings.identifiers import check
from vae.recordings.models import Side
from vae.recordings.read.reader import RecordingReader
from vae.recordings.stop_reasons import describe, is_finished


def resolve_run(candidates: Iterable[str], ref: str) -> str:
    """Return the one run id that ``ref`` names: exactly, or as a unique prefix."""
    ids = sorted(set(candidates))
    if ref in ids:
        return ref
    if ref:
        check("run", ref)
    matches = [run_id for run_id in ids if run_id.startswith(ref)] if ref else []
    if not matches:
        raise RunNotFoundError(ref)
    if len(matches) > 1:
        raise AmbiguousRunError(ref, matches)
    return matches[0]


def select_run(reader: RecordingReader, ref: str) -> str:
    return resolve_run(reader.run_ids(), ref)


def new_run_id(existing: Iterable[str], *, now: float | None = None) -> str:
    """A readable, unused run id for a run started ``now`` (local time)."""
    base = time.strftime("%Y-%m-%dT%H-%M-%S", time.localtime(time.time() if now is None else now))
    taken = set(existing)
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


class ResumeState(enum.StrEnum):
    COMPLETED = "completed"
    IN_FLIGHT = "in_flight"
    FRESH = "fresh"


@dataclass(frozen=True)
class ResumeDecision:
    scenario_name: str
    state: ResumeState
    reason: str
    session_id: str | None = None


def classify_resume(
    reader: RecordingReader, run_id: str, *, min_agent_turns: int = 0
) -> list[ResumeDecision]:
    """Classify each scenario of a run for ``vae run --resume``.

    - ``completed``: the latest attempt ended, its scored inputs (the agent's
      final state) are present, and the agent responded at least
      ``min_agent_turns`` times (counted by the bridge, not from token usage);
    - ``in_flight``: an attempt started but did not cleanly finish — still
      running when the bridge died, ended for an unfinished stop reason
      (cancelled, shutdown, a peer that never joined ...: the table in
      ``vae.recordings.stop_reasons``), no turns, no final state, or too few agent
      turns; it is re-run and the old attempt kept and marked superseded;
    - ``fresh``: never started.
    """
    latest = reader.latest_attempts(run_id)
    decisions: list[ResumeDecision] = []
    for scenario in reader.run_scenarios(run_id):
        name = scenario.scenario_name
        s = latest.get(name)
        if s is None:
            decisions.append(ResumeDecision(name, ResumeState.FRESH, "never started"))
            continue
        tag = f"attempt {s.attempt}"
        if s.ended_ns is None:
            reason = f"{tag} started but never ended (the bridge stopped mid-call)"
            decisions.append(ResumeDecision(name, ResumeState.IN_FLIGHT, reason, s.session_id))
            continue
        if not is_finished(s.stop_reason):
            detail = f": {s.stop_detail}" if s.stop_detail else ""
            reason = (
                f"{tag} ended {s.stop_reason}{detail} — unfinished "
                f"({describe(s.stop_reason)}), runs again"
            )
            decisions.append(ResumeDecision(name, ResumeState.IN_FLIGHT, reason, s.session_id))
            continue
        if s.user_turns + s.agent_turns == 0:
            reason = f"{tag} ended ({s.stop_reason}) with 0 conversation turns"
            decisions.append(ResumeDecision(name, ResumeState.IN_FLIGHT, reason, s.session_id))
            continue
        if Side.AGENT not in reader.final_states(s.session_id):
            reason = f"{tag} ended ({s.stop_reason}) without the agent's final state"
            decisions.append(ResumeDecision(name, ResumeState.IN_FLIGHT, reason, s.session_id))
            continue
        if s.agent_turns < min_agent_turns:
            reason = f"{tag}: {s.agent_turns} agent turns < min_agent_turns {min_agent_turns}"
            decisions.append(ResumeDecision(name, ResumeState.IN_FLIGHT, reason, s.session_id))
            continue
        reason = f"{tag} ended ({s.stop_reason}) with {s.agent_turns} agent turns"
        decisions.append(ResumeDecision(name, ResumeState.COMPLETED, reason, s.session_id))
    return decisions
