"""Spoken e-mail addresses ("john at example dot com") found, and written out.

Part of :mod:`vae.redaction.spoken`: a transcript says "anna lee at example
dot com" where a form says "annalee@example.com". :func:`spoken_emails` finds
such runs — words joined by "at", "dot", "underscore", "dash" and ending in a
known top-level domain, or an address already written — and gives each one's
span and written form, for the recognisers to read. Apart from the numbers
(:mod:`vae.redaction.spoken_numbers`) because the two change for different
reasons: new top-level domains and the words that end a local part here, how
people read numbers there.
"""

from __future__ import annotations

import re

_TLDS = ("com|org|net|edu|gov|io|co|uk|de|fr|es|it|nl|ie|eu|info|biz|me|us|ca|au|in|ch|be|at"
         "|se|dk|no|fi|pl|pt|app|dev|ai|email|online|mail")  # fmt: skip
_SEP = r"(?:\s*(?:\.|dot|_|underscore|-|dash|hyphen)\s*)"
_LABEL = r"[A-Za-z0-9]+"
EMAIL = re.compile(
    rf"\b(?P<local>{_LABEL}(?:{_SEP}{_LABEL})*)(?:\s*@\s*|\s+at\s+)"
    rf"(?P<domain>{_LABEL}(?:\s*(?:\.|dot)\s*{_LABEL})*\s*(?:\.|dot)\s*(?:{_TLDS}))\b",
    re.IGNORECASE,
)
_SPOKEN_SEP = {"dot": ".", "underscore": "_", "dash": "-", "hyphen": "-", "at": "@"}
#: Words that end a spoken e-mail's local part when read backwards ("send it to | anna lee at").
_NOT_LOCAL = frozenset(
    (
        "to",
        "is",
        "me",
        "my",
        "at",
        "email",
        "e",
        "mail",
        "address",
        "send",
        "it",
        "its",
        "s",
        "goes",
        "was",
        "the",
        "and",
        "or",
        "with",
        "from",
        "for",
        "of",
        "on",
        "in",
        "as",
        "be",
        "use",
        "that",
        "this",
        "i",
        "you",
        "your",
        "our",
        "his",
        "her",
        "their",
        "please",
        "update",
        "updated",
        "registered",
        "confirmation",
        "by",
        "via",
        "reach",
        "contact",
        "write",
        "also",
        "then",
        "so",
        "ok",
        "okay",
        "yes",
        "no",
        "um",
        "uh",
        "sure",
        "account",
        "work",
        "write",
        "wrote",
        "mine",
        "is",
        "was",
        "are",
        "be",
        "been",
        "sent",
        "copy",
        "cc",
    )
)
_WORD_BEFORE = re.compile(r"([A-Za-z]+)[ \t]+$")


def _local_start(text: str, start: int) -> int:
    """Where a spoken address's local part begins: up to two more words read as one
    ("anna lee at example dot com" is annalee@example.com more often than lee@...)."""
    for _ in range(2):
        m = _WORD_BEFORE.search(text, 0, start)
        if m is None or m.group(1).lower() in _NOT_LOCAL:
            break
        start = m.start(1)
    return start


def _email_text(text: str) -> str:
    parts = re.split(r"(\s+|\.|_|-|@)", text)
    out = []
    for part in parts:
        word = part.strip().lower()
        if not word:
            continue
        out.append(_SPOKEN_SEP.get(word, word))
    return "".join(out)


def spoken_emails(text: str) -> list[tuple[int, int, str]]:
    """Each e-mail address in ``text``, spoken or written: ``(start, end, written)``."""
    found = []
    for m in EMAIL.finditer(text):
        start = _local_start(text, m.start()) if " at " in m.group(0).lower() else m.start()
        found.append((start, m.end(), _email_text(text[start : m.end()])))
    return found
