"""The report's traces and cost: how the agent's spans were tied, vae's exports, and
with a price table what each session, the run and the scoring cost.

Costs follow :mod:`vae.recordings.cost`: a missing price is unknown (None,
shown "?"), never 0, and every total says how many were unknown. Each
session's entry gets its own ``cost`` (None without a price table).
"""

from __future__ import annotations

from typing import Any

from vae.recordings.cost.prices import PriceTable
from vae.recordings.models import ScoringRecord
from vae.recordings.read.cost_reads import run_cost, scoring_cost
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.report.traces_data import run_traces


def report_extras(
    reader: RecordingReader,
    run_id: str,
    scoring: ScoringRecord | None,
    prices: PriceTable | None,
    sessions: list[dict[str, Any]],
) -> dict[str, Any]:
    cost: dict[str, Any] | None = None
    if prices is not None:
        run = run_cost(reader, run_id, prices)
        cost = {
            "run": run.total.to_dict(),
            "scoring": scoring_cost(reader, scoring, prices).to_dict() if scoring else None,
            "prices": prices.source,
            "prices_as_of": prices.as_of,
        }
        for entry in sessions:
            found = run.sessions.get(entry["session_id"])
            entry["cost"] = found.to_dict(with_items=True) if found is not None else None
    return {"traces": run_traces(reader, run_id), "cost": cost}
