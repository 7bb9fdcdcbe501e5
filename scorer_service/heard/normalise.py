"""Text as words to compare: case, punctuation and numbers normalised, codes joined.

Why: "twenty first", "21st" and "21" are the same thing said three ways, and a
recogniser writes "S J two two three zero" for what a script spells "SJ2230".
A word error rate or a mismatch check on raw text would count those as
errors. So both sides of a comparison pass through :func:`tokens`:

- lower case, punctuation dropped (inside a number ``25.50`` and ``3:30`` keep
  their separators; ``3:00`` is ``3``; ``$`` / ``€`` / ``£`` become a word);
- number words become digits: "twenty first" → ``21``, "two thousand twenty
  six" → ``2026``, "one hundred and five" → ``105``; single digits in a row
  stay separate ("two two" is ``2 2``, never 4); ordinals lose their suffix
  ("21st" → ``21``);
- a run of spelled letters and digits becomes one code: "S J two two three
  zero", "SJ 2230" and "SJ2230" are all ``sj2230``; "R-5521" is ``r5521``.

Each token keeps the character span of the original text it came from, so a
difference can be quoted in the speaker's own words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}  # fmt: skip
TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
ORDINAL_UNITS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19,
}  # fmt: skip
ORDINAL_TENS = {
    "twentieth": 20, "thirtieth": 30, "fortieth": 40, "fiftieth": 50, "sixtieth": 60,
    "seventieth": 70, "eightieth": 80, "ninetieth": 90,
}  # fmt: skip
SCALES = {"hundred": 100, "thousand": 1000, "hundredth": 100, "thousandth": 1000}
CURRENCY = {"$": "dollars", "€": "euros", "£": "pounds"}
#: Letters that are also words: part of a code only beside another spelled letter.
_WORD_LETTERS = {"a", "i"}

_RAW = re.compile(
    r"(?P<iso>\d{4}-\d{2}-\d{2})"
    r"|(?P<cur>[$€£])"
    r"|(?P<hour>\d+(?::\d+)?)(?=[AaPp]\.?[Mm]\b)"
    r"|(?P<ampm>[AaPp]\.?[Mm]\b\.?)"
    r"|(?P<ord>\d+(?:st|nd|rd|th))\b"
    r"|(?P<num>\d+(?:[.:]\d+)*)(?![A-Za-z])"
    r"|(?P<code>[A-Za-z]+\d[A-Za-z\d]*|\d+[A-Za-z][A-Za-z\d]*)"
    r"|(?P<word>[A-Za-z]+(?:'[A-Za-z]+)*)"
)


@dataclass(frozen=True)
class Token:
    """One normalised word and the span ``[start, end)`` of the original text it stands for."""

    text: str
    start: int
    end: int
    #: word | number | code | letter (a spelled letter) | date (ISO)
    kind: str = "word"


def _raw(text: str) -> list[Token]:
    out: list[Token] = []
    for m in _RAW.finditer(text):
        kind = m.lastgroup or "word"
        value = m.group(0)
        a, b = m.span()
        if kind == "iso":
            out.append(Token(value, a, b, "date"))
        elif kind == "ampm":
            out.append(Token(value.replace(".", "").lower(), a, b))
        elif kind == "cur":
            out.append(Token(CURRENCY[value], a, b))
        elif kind == "ord":
            out.append(Token(str(int(re.sub(r"\D", "", value))), a, b, "number"))
        elif kind in ("num", "hour"):
            out.extend(Token(part, a, b, "number") for part in _number_parts(value))
        elif kind == "code":
            out.append(Token(value.lower(), a, b, "code"))
        else:
            lower = value.lower()
            spelled = len(value) == 1 or (value.isupper() and len(value) <= 3 and value != "I")
            out.append(Token(lower, a, b, "letter" if spelled else "word"))
    return _move_currency(out)


def _number_parts(value: str) -> list[str]:
    """``3:30`` reads "3 30", ``3:00`` reads "3"; ``007`` stays a code-like digit string."""
    if ":" in value:
        hours, _, minutes = value.partition(":")
        return [str(int(hours))] if minutes.strip("0") == "" else [str(int(hours)), minutes]
    if "." in value:
        return [value]
    return [str(int(value)) if not value.startswith("0") or len(value) == 1 else value]


def _move_currency(tokens: list[Token]) -> list[Token]:
    """``$25`` reads "25 dollars": the currency word follows its number."""
    out = list(tokens)
    for i in range(len(out) - 1):
        if out[i].text in CURRENCY.values() and out[i + 1].kind == "number":
            cur, num = out[i], out[i + 1]
            out[i] = Token(num.text, cur.start, num.end, "number")
            out[i + 1] = Token(cur.text, cur.start, num.end)
    return out


def _is_number_word(text: str) -> bool:
    return (
        text in UNITS
        or text in TENS
        or text in ORDINAL_UNITS
        or text in ORDINAL_TENS
        or (text in SCALES)
    )


def _small(words: list[str], i: int) -> tuple[int, int] | None:
    """A number below 100 at ``words[i]``: (value, words used), or None."""
    w = words[i]
    if w in TENS:
        nxt = words[i + 1] if i + 1 < len(words) else ""
        unit = UNITS.get(nxt, ORDINAL_UNITS.get(nxt, 0))
        if 1 <= unit <= 9:
            return TENS[w] + unit, 2
        return TENS[w], 1
    if w in ORDINAL_TENS:
        return ORDINAL_TENS[w], 1
    if w in UNITS:
        return UNITS[w], 1
    if w in ORDINAL_UNITS:
        return ORDINAL_UNITS[w], 1
    return None


def _one_number(words: list[str], i: int) -> tuple[int, int]:
    """The number starting at ``words[i]`` (hundreds and thousands included): (value, used)."""
    first = _small(words, i)
    if first is None:  # a bare "hundred" / "thousand"
        return SCALES[words[i]], 1
    value, used = first
    j = i + used
    for scale in (100, 1000):
        if j < len(words) and SCALES.get(words[j]) == scale and value < scale:
            value *= scale
            j += 1
            if j < len(words) and words[j] == "and" and j + 1 < len(words):
                j += 1
            rest = _small(words, j) if j < len(words) else None
            if rest is not None and words[j] not in SCALES:
                # "two thousand twenty six", "one hundred twenty"
                if (
                    scale == 1000
                    and j + rest[1] < len(words)
                    and (SCALES.get(words[j + rest[1]]) == 100)
                ):
                    hundreds = rest[0] * 100
                    j += rest[1] + 1
                    tail = _small(words, j) if j < len(words) else None
                    value += hundreds + (tail[0] if tail else 0)
                    j += tail[1] if tail else 0
                else:
                    value += rest[0]
                    j += rest[1]
    return value, j - i


def _numbers(tokens: list[Token]) -> list[Token]:
    """Runs of number words as digit tokens; single digits in a row stay one per word."""
    out: list[Token] = []
    i = 0
    while i < len(tokens):
        if not _is_number_word(tokens[i].text):
            out.append(tokens[i])
            i += 1
            continue
        j = i
        while j < len(tokens) and (
            _is_number_word(tokens[j].text)
            or (tokens[j].text == "and" and j + 1 < len(tokens) and j > i)
        ):
            j += 1
        words = [t.text for t in tokens[i:j]]
        k = 0
        while k < len(words):
            if words[k] == "and":  # "and" not inside a number is a word again
                out.append(tokens[i + k])
                k += 1
                continue
            value, used = _one_number(words, k)
            span = tokens[i + k : i + k + used]
            out.append(Token(str(value), span[0].start, span[-1].end, "number"))
            k += used
        i = j
    return out


def _as_word(t: Token) -> Token:
    """A spelled letter standing alone is just a word ("a", "I", "OK")."""
    return Token(t.text, t.start, t.end, "word") if t.kind == "letter" else t


def _code_piece(t: Token) -> bool:
    return t.kind in ("letter", "code") or (t.kind == "number" and t.text.isdigit())


def _codes(tokens: list[Token]) -> list[Token]:
    """Join runs of spelled letters and digits into one code token."""
    out: list[Token] = []
    i = 0
    while i < len(tokens):
        j = i
        while j < len(tokens) and _code_piece(tokens[j]):
            j += 1
        run = tokens[i:j]
        # A word-letter ("a", "I") at the edge of a run is the word, unless beside a letter.
        while (
            run and run[0].text in _WORD_LETTERS and not (len(run) > 1 and run[1].kind == "letter")
        ):
            out.append(Token(run[0].text, run[0].start, run[0].end))
            run = run[1:]
        letters = [t for t in run if t.kind in ("letter", "code")]
        single_digits = [t for t in run if t.kind == "number" and len(t.text) == 1]
        if len(run) >= 2 and (letters or len(single_digits) >= 2):
            joined = "".join(t.text for t in run)
            out.append(Token(joined, run[0].start, run[-1].end, "code"))
        else:
            out.extend(_as_word(t) for t in run)
        if j == i:
            out.append(tokens[i])
            j = i + 1
        i = j
    return out


def tokens(text: str) -> list[Token]:
    """``text`` as normalised tokens (see the module docstring), each with its source span."""
    return _codes(_numbers(_raw(text)))


def words(text: str) -> list[str]:
    """Just the normalised words of ``text``."""
    return [t.text for t in tokens(text)]
