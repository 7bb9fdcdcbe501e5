"""Costs read from the store: per session (the agent's), per run, per scoring.

A run's cost sums its counted sessions: each scenario's latest attempt
(superseded attempts excluded), as every rate of vae counts them. A scoring's
cost is its judge's calls plus what the LLM caller reported in the sessions it
scored: what evaluating cost, apart from what the agent cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vae.recordings.cost.compute import Cost, Total, cost_of, total
from vae.recordings.cost.prices import PriceTable
from vae.recordings.cost.usage import caller_usage, judge_usage, session_usage
from vae.recordings.models import EventKind, ScoringRecord, SessionRecord
from vae.recordings.read.trace_reads import agent_spans, llm_calls

if TYPE_CHECKING:
    from vae.recordings.read.reader import RecordingReader

_KINDS = [EventKind.TOKEN_USAGE, EventKind.METRIC]


def session_cost(reader: RecordingReader, session: SessionRecord, table: PriceTable) -> Cost:
    events = reader.events(session.session_id, _KINDS)
    spans = agent_spans(reader, session.run_id, session.session_id)
    text = reader.session_mode(session.session_id).text
    items = session_usage(events, spans, None if text else session.duration_s)
    return cost_of(items, table)


@dataclass(frozen=True)
class RunCost:
    sessions: dict[str, Cost]
    total: Total

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.total.to_dict(),
            "sessions": {sid: c.to_dict(with_items=True) for sid, c in self.sessions.items()},
        }


def run_cost(reader: RecordingReader, run_id: str, table: PriceTable) -> RunCost:
    """Cost of each counted session of the run, and their total."""
    counted = sorted(reader.latest_attempts(run_id).values(), key=lambda s: s.scenario_name)
    costs = {s.session_id: session_cost(reader, s, table) for s in counted}
    return RunCost(costs, total(costs.values()))


@dataclass(frozen=True)
class ScoringCost:
    judge: Cost
    caller: Cost
    total: Total

    def to_dict(self) -> dict[str, Any]:
        return {**self.total.to_dict(), "judge": self.judge.to_dict(with_items=True),
                "caller": self.caller.to_dict(with_items=True)}  # fmt: skip


def scoring_cost(reader: RecordingReader, scoring: ScoringRecord, table: PriceTable) -> ScoringCost:
    judge = cost_of(judge_usage(llm_calls(reader, scoring.scoring_id)), table, empty_known=True)
    scored = {score.session_id for score in reader.scores(scoring.scoring_id)}
    items = []
    for session_id in sorted(scored):
        items += caller_usage(reader.events(session_id, [EventKind.TOKEN_USAGE]))
    caller = cost_of(items, table, empty_known=True)
    return ScoringCost(judge, caller, total([judge, caller]))
