"""Which timed words a finding covers: the time span to mask for text found in a transcript.

Word timings come as ``[{word, start, end}]`` (seconds, as Whisper's
``verbose_json`` gives them, or as a bot or an imported call's sidecar gives
them). The words rarely spell the text exactly (punctuation, case, "4111"
against "four one one one"), so the transcript's tokens and the timed words
are aligned as sequences (difflib), and a finding takes the span from the
first to the last word its tokens align with. A finding whose tokens align
with no timed word has no span (the caller masks the whole turn).
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from vae.redaction.detect import Finding

_TOKEN = re.compile(r"[^\s]+")


def _norm(word: str) -> str:
    return re.sub(r"[^a-z0-9@]", "", word.lower())


def timed_words(raw: Any) -> list[tuple[str, float, float]]:
    """Well-formed ``{word, start, end}`` entries of ``raw`` (others are left out)."""
    out = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        word, start, end = item.get("word"), item.get("start"), item.get("end")
        if (
            isinstance(word, str)
            and isinstance(start, int | float)
            and isinstance(end, int | float)
            and not isinstance(start, bool)
            and 0 <= start <= end
        ):
            out.append((word, float(start), float(end)))
    return out


def spans(
    text: str, found: list[Finding], raw: list[dict[str, Any]]
) -> list[tuple[Finding, float, float] | tuple[Finding, None, None]]:
    """``(finding, start_s, end_s)`` per finding; ``(finding, None, None)`` when uncovered."""
    timed = timed_words(raw)
    tokens = [(m.start(), m.end(), _norm(m.group(0))) for m in _TOKEN.finditer(text)]
    tokens = [t for t in tokens if t[2]]
    matcher = difflib.SequenceMatcher(
        a=[t[2] for t in tokens], b=[_norm(w) for w, _, _ in timed], autojunk=False
    )
    # Each token's range of timed words: one word where they match; the words
    # between two matches where they differ (digits written, words spoken).
    to_words: dict[int, tuple[int, int]] = {}
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            for k in range(a1 - a0):
                to_words[a0 + k] = (b0 + k, b0 + k)
        elif op == "replace":
            for k in range(a0, a1):
                to_words[k] = (b0, b1 - 1)
    out: list[tuple[Finding, float, float] | tuple[Finding, None, None]] = []
    for f in found:
        covered = [i for i, (a, b, _) in enumerate(tokens) if a < f.end and f.start < b]
        if not covered or any(i not in to_words for i in covered):
            out.append((f, None, None))
            continue
        lo = min(to_words[i][0] for i in covered)
        hi = max(to_words[i][1] for i in covered)
        out.append((f, timed[lo][1], timed[hi][2]))
    return out
