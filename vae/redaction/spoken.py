"""Spoken forms written out, with a map back: what pattern recognisers miss in transcripts.

A transcript says "four one one one, one one one one" where a form says
"4111 1111"; "john at example dot com" where a form says "john@example.com";
"oh seven nine one one" for a phone number; "the third of March nineteen
eighty" for a date. :func:`normalise` writes such runs out —
"4111 1111", "john@example.com", "07911", "the 3 of March 1980" — so the same
recognisers find them, and keeps, for every character of the written-out text,
the span of the original it stands for: a finding in the written-out text maps
back to the words that were spoken (:meth:`Normalised.source_span`).

Rules, chosen for how people read numbers out:

- digits and number words in a row make one number: "four one one one" ->
  4111; "nineteen eighty five" -> 1985; "twenty twenty four" -> 2024; "four
  hundred and fifty" -> 450; "oh" and "o" are zero next to another digit;
  "double five" -> 55, "triple" likewise; "plus" before a number -> +;
- a comma, full stop or hyphen between number words is a pause (but
  "eighty-five" is one number): the groups
  are kept apart by one space ("four one one one, one one one one" -> "4111
  1111"), as written numbers group their digits;
- single capital letters next to such a number join it ("G B eight two" ->
  GB82, "Q Q one two three four five six C" -> QQ123456C);
- an ordinal ("third", "twenty first") is a number of its own (a day);
- "at", "dot", "underscore", "dash" between words ending in a known top-level
  domain make an e-mail address.

The written-out text is only ever read by recognisers; what is redacted is
always the original's span.
"""

from __future__ import annotations

from dataclasses import dataclass

from vae.redaction.spoken_email import spoken_emails
from vae.redaction.spoken_numbers import number_runs


@dataclass(frozen=True)
class Normalised:
    """The written-out text and, per character, the original span it stands for."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """The original span behind ``text[start:end]``."""
        if end <= start:
            return self.starts[start], self.starts[start]
        return min(self.starts[start:end]), max(self.ends[start:end])


class _Builder:
    def __init__(self, original: str) -> None:
        self.original = original
        self.text: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []

    def copy(self, start: int, end: int) -> None:
        for i in range(start, end):
            self.text.append(self.original[i])
            self.starts.append(i)
            self.ends.append(i + 1)

    def put(self, written: str, start: int, end: int) -> None:
        for ch in written:
            self.text.append(ch)
            self.starts.append(start)
            self.ends.append(end)

    def done(self) -> Normalised:
        return Normalised("".join(self.text), tuple(self.starts), tuple(self.ends))


def normalise(text: str) -> Normalised:
    """``text`` with spoken numbers, letters and e-mail addresses written out (see above)."""
    out = _Builder(text)
    cursor = 0
    for start, end, written in spoken_emails(text):
        _numbers(text, cursor, start, out)
        out.put(written, start, end)
        cursor = end
    _numbers(text, cursor, len(text), out)
    return out.done()


def _numbers(text: str, lo: int, hi: int, out: _Builder) -> None:
    """Write ``text[lo:hi]`` into ``out`` with its number runs written out."""
    cursor = lo
    for start, end, written in number_runs(text, lo, hi):
        out.copy(cursor, start)
        out.put(written, start, end)
        cursor = end
    out.copy(cursor, hi)
