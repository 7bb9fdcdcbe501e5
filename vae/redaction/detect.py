"""Findings in one text: recognisers over the text and its spoken forms written out, merged.

A finding is a type and a span of the original text, nothing more: the value
itself is never kept (a ledger stores the type and where, never what). The
text is read twice — as it is, and with spoken numbers, letters and e-mail
words written out (:mod:`vae.redaction.spoken`), whose findings map back to
the words spoken — and, with an endpoint configured, once more by the names
endpoint (:mod:`vae.redaction.names`). Overlapping findings merge into one
span of the strongest type. Placeholders already in the text are never
findings, so redacted text reads as clean.
"""

from __future__ import annotations

from dataclasses import dataclass

from vae.redaction.config import RedactionConfig
from vae.redaction.entities import BUILT_IN, PLACEHOLDER
from vae.redaction.names import NameFinder
from vae.redaction.recognisers import Hit, Recognisers
from vae.redaction.spoken import normalise

#: Which type wins where findings overlap at equal scores (custom types first).
_PRIORITY = ("CREDIT_CARD", "IBAN_CODE", "NATIONAL_ID", "EMAIL_ADDRESS", "PHONE_NUMBER",
             "DATE_OF_BIRTH", "ADDRESS", "PERSON")  # fmt: skip


@dataclass(frozen=True)
class Finding:
    """One span of personal data: its type and where it is (``text[start:end]``)."""

    entity: str
    start: int
    end: int


def _rank(entity: str) -> int:
    return _PRIORITY.index(entity) + 1 if entity in _PRIORITY else 0


class Detector:
    """The configured recognisers (and names endpoint) over one text at a time."""

    def __init__(self, config: RedactionConfig) -> None:
        self.config = config
        self.recognisers = Recognisers(config)
        self.names = NameFinder(config.names) if config.names is not None else None

    def close(self) -> None:
        if self.names is not None:
            self.names.close()

    def find(self, text: str) -> list[Finding]:
        if not text or not any(ch.isalnum() for ch in text):
            return []
        hits = list(self.recognisers.hits(text))
        if self.config.spoken_forms:
            written = normalise(text)
            if written.text != text:
                for h in self.recognisers.hits(written.text, spoken=True):
                    start, end = written.source_span(h.start, h.end)
                    hits.append(Hit(h.entity, start, end, h.score))
        if self.names is not None:
            wanted = {"PERSON", "ADDRESS"} & set(self.config.entities)
            hits += [h for h in self.names.find(text) if h.entity in wanted]
        protected = [(m.start(), m.end()) for m in PLACEHOLDER.finditer(text)]
        hits = [h for h in hits if h.end > h.start and not _overlaps(h, protected)]
        return merge(hits)


def _overlaps(hit: Hit, spans: list[tuple[int, int]]) -> bool:
    return any(hit.start < b and a < hit.end for a, b in spans)


def merge(hits: list[Hit]) -> list[Finding]:
    """Overlapping hits as one finding each: their union, typed by the strongest hit."""
    out: list[Finding] = []
    group: list[Hit] = []
    for h in sorted(hits, key=lambda h: (h.start, -h.end)):
        if group and h.start >= max(g.end for g in group):
            out.append(_one(group))
            group = []
        group.append(h)
    if group:
        out.append(_one(group))
    return out


def _one(group: list[Hit]) -> Finding:
    best = max(group, key=lambda h: (h.score, -_rank(h.entity), h.end - h.start))
    return Finding(best.entity, min(h.start for h in group), max(h.end for h in group))


__all__ = ["BUILT_IN", "Detector", "Finding", "merge"]
