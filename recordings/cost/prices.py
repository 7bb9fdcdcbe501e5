"""The price table: a TOML file the user supplies (``--prices FILE``).

Schema (docs/traces.md)::

    as_of = "2026-12-01"          # optional: when these prices were read
    currency = "USD"              # optional; only USD is accepted

    [[prices]]
    provider = "openai"           # optional: without it the entry matches any provider
    model = "gpt-4o-mini"         # required, matched exactly
    input_per_token = 0.00000015  # USD per input token
    output_per_token = 0.0000006  # USD per output token

    [[prices]]
    model = "aura-2"
    per_character = 0.00003       # TTS: USD per character

    [[prices]]
    model = "nova-3"
    per_second = 0.0000717        # STT: USD per second of audio

Every price is a non-negative number; an entry needs at least one; unknown
keys are refused (a typo must not silently price something at nothing). A
lookup prefers the entry naming the provider over one that does not.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PRICE_KEYS = ("input_per_token", "output_per_token", "per_character", "per_second")
_ENTRY_KEYS = frozenset({"provider", "model", *PRICE_KEYS})
_TOP_KEYS = frozenset({"prices", "as_of", "currency", "note"})


class PriceFileError(ValueError):
    """The price file cannot be used; the message names the file and the entry."""


@dataclass(frozen=True, slots=True)
class Price:
    model: str
    provider: str = ""
    input_per_token: float | None = None
    output_per_token: float | None = None
    per_character: float | None = None
    per_second: float | None = None


@dataclass(frozen=True)
class PriceTable:
    prices: tuple[Price, ...]
    source: str = ""
    as_of: str = ""

    def lookup(self, provider: str, model: str) -> Price | None:
        """The entry for ``model`` from ``provider``; one without a provider matches any."""
        if not model:
            return None
        anyone = None
        for p in self.prices:
            if p.model != model:
                continue
            if p.provider and p.provider == provider:
                return p
            if not p.provider and anyone is None:
                anyone = p
        return anyone


def _number(where: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PriceFileError(f"{where}: {key} must be a number, got {value!r}")
    if value < 0:
        raise PriceFileError(f"{where}: {key} must not be negative, got {value!r}")
    return float(value)


def parse(document: dict[str, Any], source: str = "<prices>") -> PriceTable:
    unknown = sorted(set(document) - _TOP_KEYS)
    if unknown:
        raise PriceFileError(f"{source}: unknown key(s) {', '.join(unknown)} (expected "
                             "[[prices]] entries, as_of, currency, note)")  # fmt: skip
    currency = document.get("currency", "USD")
    if currency != "USD":
        raise PriceFileError(f"{source}: currency must be USD, got {currency!r}")
    entries = document.get("prices", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise PriceFileError(f"{source}: prices must be an array of tables ([[prices]])")
    out = []
    for i, entry in enumerate(entries, 1):
        where = f"{source}: [[prices]] entry {i}"
        bad = sorted(set(entry) - _ENTRY_KEYS)
        if bad:
            raise PriceFileError(f"{where}: unknown key(s) {', '.join(bad)} (allowed: "
                                 f"{', '.join(sorted(_ENTRY_KEYS))})")  # fmt: skip
        model = entry.get("model")
        if not isinstance(model, str) or not model.strip():
            raise PriceFileError(f"{where}: model is required (a non-empty string)")
        provider = entry.get("provider", "")
        if not isinstance(provider, str):
            raise PriceFileError(f"{where}: provider must be a string")
        values = {k: _number(where, k, entry[k]) for k in PRICE_KEYS if k in entry}
        if not values:
            raise PriceFileError(f"{where} ({model}): give at least one of {', '.join(PRICE_KEYS)}")
        out.append(Price(model=model, provider=provider, **values))
    as_of = document.get("as_of", "")
    return PriceTable(tuple(out), source, str(as_of))


def load(path: Path | str) -> PriceTable:
    """The table in ``path``; :class:`PriceFileError` naming what is wrong."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise PriceFileError(f"{p}: cannot read the price file: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PriceFileError(f"{p}: the price file is not UTF-8 text") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PriceFileError(f"{p}: not valid TOML: {exc}") from None
    return parse(document, str(p))
