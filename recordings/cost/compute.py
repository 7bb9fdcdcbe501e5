"""Usage times prices. A missing price is unknown (None), never 0; totals count them.

An item is priced by the entry for its provider and model
(:meth:`~vae.recordings.cost.prices.PriceTable.lookup`); tokens need
``input_per_token``/``output_per_token``, characters ``per_character``,
seconds ``per_second``. An amount of zero needs no price. Nothing reported
at all is unknown too: an agent that reports no usage did not cost nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from vae.recordings.cost.prices import PriceTable
from vae.recordings.cost.usage import LLM, TTS, UsageItem


def item_cost(item: UsageItem, table: PriceTable) -> float | None:
    price = table.lookup(item.provider, item.model)
    if price is None:
        amounts = [item.input_tokens, item.output_tokens, item.characters, item.seconds]
        return 0.0 if not any(amounts) else None
    parts: list[tuple[float, float | None]]
    if item.kind == LLM:
        parts = [(item.input_tokens, price.input_per_token),
                 (item.output_tokens, price.output_per_token)]  # fmt: skip
    elif item.kind == TTS:
        parts = [(item.characters, price.per_character)]
    else:
        parts = [(item.seconds, price.per_second)]
    total = 0.0
    for amount, rate in parts:
        if amount == 0:
            continue
        if rate is None:
            return None
        total += amount * rate
    return total


@dataclass(frozen=True)
class Cost:
    """USD of some items: ``usd`` is None when any item's price is unknown."""

    usd: float | None
    known_usd: float
    items: int
    unknown: int
    lines: tuple[tuple[UsageItem, float | None], ...] = ()

    def to_dict(self, with_items: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "usd": None if self.usd is None else round(self.usd, 6),
            "known_usd": round(self.known_usd, 6),
            "items": self.items,
            "unknown_items": self.unknown,
        }
        if with_items:
            out["usage"] = [
                {**item.to_dict(), "usd": None if c is None else round(c, 6)}
                for item, c in self.lines
            ]
        return out


def cost_of(items: Sequence[UsageItem], table: PriceTable, empty_known: bool = False) -> Cost:
    """The cost of ``items``. No item at all is unknown (an agent that reported nothing),
    unless ``empty_known`` (a scoring whose judge answered from its cache cost nothing)."""
    if not items:
        return Cost(0.0 if empty_known else None, 0.0, 0, 0 if empty_known else 1)
    lines = tuple((item, item_cost(item, table)) for item in items)
    known = sum(c for _, c in lines if c is not None)
    unknown = sum(1 for _, c in lines if c is None)
    return Cost(None if unknown else known, known, len(items), unknown, lines)


@dataclass(frozen=True)
class Total:
    """A sum over sessions (a run) or parts (a scoring), saying how much was unknown."""

    usd: float | None
    known_usd: float
    parts: int
    unknown_parts: int
    unknown_items: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "usd": None if self.usd is None else round(self.usd, 6),
            "known_usd": round(self.known_usd, 6),
            "parts": self.parts,
            "unknown_parts": self.unknown_parts,
            "unknown_items": self.unknown_items,
        }


def total(costs: Iterable[Cost]) -> Total:
    costs = list(costs)
    known = sum(c.known_usd for c in costs)
    unknown_parts = sum(1 for c in costs if c.usd is None)
    unknown_items = sum(c.unknown for c in costs)
    return Total(None if unknown_parts else known, known, len(costs), unknown_parts, unknown_items)


def usd_text(usd: float | None) -> str:
    """A cost for a table: "?" when unknown, never 0."""
    if usd is None:
        return "?"
    return f"${usd:.4f}" if usd < 1 else f"${usd:.2f}"
