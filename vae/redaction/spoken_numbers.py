"""Spoken numbers ("four one one one", "nineteen eighty five", "the third") written out.

Part of :mod:`vae.redaction.spoken` (whose docstring lists the rules): digits
and number words in a row make one number, pauses keep groups apart, single
capital letters join a number, ordinals are numbers of their own.
:func:`number_runs` finds each run in a stretch of text and gives its span and
written form. Apart from the e-mail addresses
(:mod:`vae.redaction.spoken_email`): this changes with how people read numbers
out, not with how addresses are spoken.
"""

from __future__ import annotations

import re

_UNITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
          "seven": 7, "eight": 8, "nine": 9}  # fmt: skip
_ZEROS = {"oh", "o", "nought", "naught"}
_TEENS = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
          "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
          "nineteen": 19}  # fmt: skip
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60,
         "seventy": 70, "eighty": 80, "ninety": 90}  # fmt: skip
_ORDINAL_UNITS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
                  "seventh": 7, "eighth": 8, "ninth": 9}  # fmt: skip
_ORDINALS = {**_ORDINAL_UNITS, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
             "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17,
             "eighteenth": 18, "nineteenth": 19, "twentieth": 20, "thirtieth": 30}  # fmt: skip
_REPEAT = {"double": 2, "triple": 3}
_PAUSE = {",", ".", "-", ";", "/"}
TOKEN = re.compile(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]")


def _kind(word: str, prev: str | None, nxt: str | None) -> str:
    low = word.lower()
    if word.isdigit():
        return "digits"
    if low in _UNITS or low in _TEENS or low in _TENS or low in ("hundred", "thousand"):
        return "number"
    if low in _ORDINALS:
        return "ordinal"
    if low in _REPEAT:
        return "repeat"
    near = [w for w in (prev, nxt) if w]
    if low in _ZEROS and any(
        n.lower() in _UNITS or n.lower() in _ZEROS or n.isdigit() for n in near
    ):
        return "number"
    # "I" is a word unless it is spelled among letters ("N I W V").
    if (len(word) == 1 and word.isupper()) and (
        word != "I" or any(len(n) == 1 and n.isupper() for n in near)
    ):
        return "letter"
    return ""


class _Number:
    """Number words of one group, folded into chunks: [19][85] -> "1985"."""

    def __init__(self) -> None:
        self.chunks: list[list[object]] = []  # [text, value | None, accepts]
        self.repeat = 1

    def _add(self, value: int, accepts: set[str]) -> None:
        self.chunks.append([None, value, accepts])

    def word(self, word: str) -> None:
        low = word.lower()
        last = self.chunks[-1] if self.chunks else None
        accepts: set[str] = last[2] if last is not None else set()  # type: ignore[assignment]
        if low in _REPEAT:
            self.repeat = _REPEAT[low]
            return
        if word.isdigit() or (len(word) == 1 and word.isupper()):
            self.chunks.append([word * self.repeat, None, set()])
        elif low in _UNITS or low in _ZEROS:
            value = _UNITS.get(low, 0)
            if last is not None and "unit" in accepts and value:
                last[1] = int(last[1]) + value  # type: ignore[call-overload]
                last[2] = set()
            else:
                for _ in range(self.repeat):
                    self._add(value, set())
        elif low in _TEENS:
            if last is not None and "teen" in accepts:
                last[1], last[2] = int(last[1]) + _TEENS[low], set()  # type: ignore[call-overload]
            else:
                self._add(_TEENS[low], set())
        elif low in _TENS:
            if last is not None and "tens" in accepts:
                last[1] = int(last[1]) + _TENS[low]  # type: ignore[call-overload]
                last[2] = {"unit"}
            else:
                self._add(_TENS[low], {"unit"})
        elif low in ("hundred", "thousand"):
            factor = 100 if low == "hundred" else 1000
            if last is not None and isinstance(last[1], int) and last[1] < factor:
                last[1] *= factor
            else:
                self._add(factor, set())
            self.chunks[-1][2] = {"unit", "teen", "tens", "and"}
        self.repeat = 1

    def accepts_and(self) -> bool:
        return bool(self.chunks) and "and" in self.chunks[-1][2]  # type: ignore[operator]

    def text(self) -> str:
        return "".join(str(t) if t is not None else str(v) for t, v, _ in self.chunks)


def _ordinal(words: list[str]) -> int:
    low = [w.lower() for w in words]
    if len(low) == 2 and low[0] in _TENS:
        return _TENS[low[0]] + _ORDINAL_UNITS.get(low[1], 0)
    return _ORDINALS[low[-1]]


def number_runs(text: str, lo: int, hi: int) -> list[tuple[int, int, str]]:
    """Each number run in ``text[lo:hi]`` with a spoken number in it: ``(start, end, written)``."""
    tokens = [(m.group(0), m.start() + lo, m.end() + lo) for m in TOKEN.finditer(text[lo:hi])]
    found = []
    i = 0
    while i < len(tokens):
        run_end = _run(tokens, i)
        if run_end == i:
            i += 1
            continue
        written = _write_run(tokens[i:run_end])
        if written is not None:
            found.append((tokens[i][1], tokens[run_end - 1][2], written))
        i = run_end
    return found


def _run(tokens: list[tuple[str, int, int]], i: int) -> int:
    """The end (exclusive) of the number run starting at ``tokens[i]`` (``i``: none)."""
    j, numbers, spoken = i, 0, 0
    while j < len(tokens):
        word = tokens[j][0]
        prev = tokens[j - 1][0] if j > 0 else None
        nxt = tokens[j + 1][0] if j + 1 < len(tokens) else None
        after = tokens[j + 2][0] if j + 2 < len(tokens) else None
        kind = _kind(word, prev, nxt)
        if j == i and word.lower() == "plus" and nxt and _kind(nxt, word, after):
            j += 1
            continue
        if kind in ("number", "digits", "ordinal"):
            numbers += 1
            spoken += kind != "digits"
        elif kind in ("letter", "repeat") or (
            word in _PAUSE and j > i and nxt is not None and _kind(nxt, word, after)
        ):
            pass
        elif word.lower() == "and" and j > i and nxt is not None and _kind(nxt, word, after):
            pass  # kept only where the number takes it (_write_run)
        else:
            break
        j += 1
    while j > i and (tokens[j - 1][0] in _PAUSE or tokens[j - 1][0].lower() == "and"):
        j -= 1
    # Digits alone are written already: only runs with a spoken number are rewritten.
    return j if numbers and spoken else i


def _write_run(tokens: list[tuple[str, int, int]]) -> str | None:
    """A run written out, or None when it is only letters (nothing to write out)."""
    pieces: list[str] = []
    group = _Number()
    words = [t[0] for t in tokens]
    # "eighty-five", "twenty-first": one number written with a hyphen, not a pause.
    units = set(_UNITS) | set(_ORDINAL_UNITS)
    words = [w for i, w in enumerate(words)
             if not (w == "-" and 0 < i < len(words) - 1 and words[i - 1].lower() in _TENS
                     and words[i + 1].lower() in units)]  # fmt: skip
    k = 0

    def close() -> None:
        nonlocal group
        text = group.text()
        if text:
            pieces.append(text)
        group = _Number()

    while k < len(words):
        word = words[k]
        low = word.lower()
        if low == "plus":
            pieces.append("+")
        elif word in _PAUSE:
            close()
            pieces.append(" ")
        elif low == "and":
            if not group.accepts_and():
                close()
                pieces.append(" and ")
        elif low in _ORDINALS or (
            low in _TENS and k + 1 < len(words) and words[k + 1].lower() in _ORDINAL_UNITS
        ):
            close()
            span = 2 if low in _TENS else 1
            pieces.append(f" {_ordinal(words[k : k + span])} ")
            k += span
            continue
        else:
            group.word(word)
        k += 1
    close()
    written = re.sub(r"\s+", " ", "".join(pieces)).strip()
    if not any(ch.isdigit() for ch in written):
        return None
    return written
