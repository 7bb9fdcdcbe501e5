"""``vae gate --max-cost-per-call USD --prices FILE``: a ceiling on what one call cost.

Why its own module: the threshold is a cost, priced by a table the user
supplies, beside the gate's rate checks rather than inside them. Each counted
session (each scenario's latest attempt; superseded attempts are excluded) is
priced with :mod:`vae.recordings.cost`: the agent's usage from its own
reports. A session above the ceiling fails the gate (exit 1); a session whose
cost is unknown — a model with no price, or no usage reported at all — means
the gate cannot decide (exit 3), never a pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from vae.cli.telemetry import prices_option

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator
    from vae.recordings.cost.prices import PriceTable
    from vae.scorer_service.gate import GateResult
    from vae.scorer_service.gate.checks import Check

F = TypeVar("F", bound=Callable[..., Any])
NAME = "max-cost-per-call"


def cost_options(func: F) -> F:
    func = prices_option(func)
    return click.option(
        "--max-cost-per-call",
        "max_cost",
        type=click.FloatRange(min=0),
        default=None,
        metavar="USD",
        envvar="VAE_MAX_COST_PER_CALL",
        help="Fail when a counted session (a call) cost more than USD, priced with --prices; "
        "a cost that is unknown cannot be decided: exit 3 (env VAE_MAX_COST_PER_CALL).",
    )(func)


def take(kw: dict[str, Any]) -> tuple[float | None, PriceTable | None]:
    """Pop the two options; a usage error (exit 2) when one comes without the other."""
    max_cost, prices = kw.pop("max_cost"), kw.pop("prices")
    if max_cost is not None and prices is None:
        raise click.UsageError("--max-cost-per-call needs --prices FILE (docs/traces.md)")
    if prices is not None and max_cost is None:
        raise click.UsageError("--prices is read by --max-cost-per-call: give both")
    return max_cost, prices


def cost_check(db: Locator, run_id: str, max_usd: float, prices: PriceTable) -> Check:
    from vae.recordings.cost.compute import usd_text
    from vae.recordings.read.cost_reads import run_cost
    from vae.recordings.read.reader import RecordingReader
    from vae.scorer_service.gate.checks import FAILED, PASSED, UNDECIDED, Check

    with RecordingReader(db) as reader:
        costs = run_cost(reader, run_id, prices)
    if not costs.sessions:
        return Check(NAME, UNDECIDED, "no counted session to price", max_usd, None)
    unknown = {sid: c for sid, c in costs.sessions.items() if c.usd is None}
    if unknown:
        missing = sorted(
            {f"{i.kind} {i.model or '(model not reported)'}" for c in unknown.values()
             for i, usd in c.lines if usd is None} or {"no usage reported"}
        )  # fmt: skip
        why = (f"the cost of {len(unknown)} of {len(costs.sessions)} sessions is unknown "
               f"(no price for: {', '.join(missing)})")  # fmt: skip
        return Check(NAME, UNDECIDED, why, max_usd, None)
    worst_id, worst = max(costs.sessions.items(), key=lambda kv: kv[1].usd or 0.0)
    highest = worst.usd or 0.0
    over = [sid for sid, c in costs.sessions.items() if (c.usd or 0.0) > max_usd]
    if over:
        return Check(NAME, FAILED, f"{len(over)} of {len(costs.sessions)} calls cost more than "
                     f"{usd_text(max_usd)} (highest {usd_text(highest)}, {worst_id})",
                     max_usd, round(highest, 6))  # fmt: skip
    return Check(NAME, PASSED, f"every call cost at most {usd_text(max_usd)} (highest "
                 f"{usd_text(highest)}, {worst_id})", max_usd, round(highest, 6))  # fmt: skip


def with_cost(
    result: GateResult, db: Locator, max_usd: float | None, prices: PriceTable | None
) -> GateResult:
    """``result`` with the cost check added (unchanged without the options)."""
    from dataclasses import replace

    if max_usd is None or prices is None:
        return result
    return replace(result, checks=[*result.checks, cost_check(db, result.run_id, max_usd, prices)])
