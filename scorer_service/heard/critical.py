"""Critical items: what must be heard exactly — dates, numbers, codes, names.

Why: a word error rate treats "the" and "twentieth" alike, but an agent that
mishears "twentieth" books the wrong day. The items below are what a caller
cannot afford to be misheard on; one present on one side of a turn and
different or missing on the other is a *critical mismatch*.

From normalised tokens (:mod:`vae.scorer_service.heard.normalise`):

- ``date`` — a month with a day ("March twentieth", "20 March", "the 20th of
  March": ``03-20``), an ISO date (``2026-03-20`` → ``03-20``: the year is
  rarely spoken), a weekday ("Thursday");
- ``number`` — any other number: amounts, times, party sizes, counts;
- ``code`` — a booking or order code, spelled letters ("S J two two three
  zero" → ``sj2230``);
- ``name`` — a capitalised word that does not start a sentence (in the text
  as written: a recogniser's lower-case output has none, and its names are
  checked only as words the other side must contain).

The same items are read from the values a failing signal compared (a tool
argument, a DB value, an NL assertion), which is how a failure is traced back
to a mishearing (:mod:`vae.scorer_service.heard.attribution`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from vae.scorer_service.heard.normalise import Token, tokens

MONTHS = {
    name: i + 1
    for i, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
         ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
         ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
         ("december", "dec")]
    )
    for name in names
}  # fmt: skip
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_SENTENCE_END = re.compile(r"[.!?:;]\s*$")


@dataclass(frozen=True)
class Item:
    """One critical item: its kind, canonical value, and tokens ``[first, last)``."""

    kind: str
    value: str
    first: int
    last: int

    def same(self, other: Item) -> bool:
        """The same fact: equal, or a number equal to a date's day."""
        if self.kind == other.kind:
            return self.value == other.value
        pair = {self.kind, other.kind}
        if pair == {"number", "date"}:
            num, date = (self, other) if self.kind == "number" else (other, self)
            day = date.value.split("-")[-1]
            return num.value.isdigit() and day.isdigit() and int(day) == int(num.value)
        return False


def _day(tok: Token | None) -> int | None:
    if tok is None or tok.kind != "number" or not tok.text.isdigit():
        return None
    day = int(tok.text)
    return day if 1 <= day <= 31 else None


def _at(toks: list[Token], i: int) -> Token | None:
    return toks[i] if 0 <= i < len(toks) else None


def _date_at(toks: list[Token], i: int) -> tuple[str, int] | None:
    """A date starting at ``toks[i]``: (canonical value, tokens used), or None."""
    t = toks[i]
    if t.kind == "date":
        _, mm, dd = t.text.split("-")
        return f"{int(mm):02d}-{int(dd):02d}", 1
    if t.text in MONTHS:
        skip = 2 if (nxt := _at(toks, i + 1)) is not None and nxt.text == "the" else 1
        day = _day(_at(toks, i + skip))
        if day is not None:
            return f"{MONTHS[t.text]:02d}-{day:02d}", skip + 1
        return None
    num = _day(t)
    if num is not None:
        skip = 2 if (nxt := _at(toks, i + 1)) is not None and nxt.text == "of" else 1
        month = _at(toks, i + skip)
        if month is not None and month.text in MONTHS:
            return f"{MONTHS[month.text]:02d}-{num:02d}", skip + 1
    if t.text in WEEKDAYS:
        return t.text, 1
    return None


def _is_name(tok: Token, text: str) -> bool:
    if tok.kind != "word" or tok.text in MONTHS or tok.text in WEEKDAYS or tok.text == "i":
        return False
    original = text[tok.start : tok.end]
    if not original[:1].isupper() or (original.isupper() and len(original) > 1):
        return False
    before = text[: tok.start]
    return bool(before.strip()) and not _SENTENCE_END.search(before)


def items(toks: list[Token], text: str = "") -> list[Item]:
    """The critical items of ``toks`` (``text``: the original, to tell names apart)."""
    out: list[Item] = []
    i = 0
    while i < len(toks):
        date = _date_at(toks, i)
        if date is not None:
            out.append(Item("date", date[0], i, i + date[1]))
            i += date[1]
            continue
        t = toks[i]
        if t.kind == "number":
            value = t.text
            if value.replace(".", "", 1).isdigit() and "." in value:
                value = f"{float(value):g}"
            out.append(Item("number", value, i, i + 1))
        elif t.kind == "code":
            out.append(Item("code", t.text, i, i + 1))
        elif text and _is_name(t, text):
            out.append(Item("name", t.text, i, i + 1))
        i += 1
    return out


def text_items(text: str) -> list[Item]:
    return items(tokens(text), text)


def value_items(value: Any) -> list[Item]:
    """The critical items in a compared value (a tool argument, a DB state, an assertion)."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        return [Item("number", f"{value:g}", 0, 1)]
    if isinstance(value, str):
        return text_items(value)
    if isinstance(value, dict):
        return [i for v in value.values() for i in value_items(v)]
    if isinstance(value, list | tuple):
        return [i for v in value for i in value_items(v)]
    return text_items(json.dumps(value, default=str))


def contains(found: list[Item], item: Item) -> bool:
    return any(item.same(other) for other in found)
