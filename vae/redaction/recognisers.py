"""presidio-analyzer's recognisers, set up to run offline, and vae's own patterns beside them.

Why no ``AnalyzerEngine``: its default NLP engine is spaCy with a language model
that is downloaded on first use; vae must never fetch anything at run time. Every
recogniser used here is a pattern (or python-phonenumbers) recogniser whose
``analyze`` needs no NLP artifacts, so each is called directly. Two more steps
keep it offline: the e-mail recogniser's domain check reads tldextract's
bundled suffix list instead of fetching the current one, and context words
(presidio's "enhancement", which needs lemmas from an NLP engine) are matched
here as plain words before a finding (:func:`boost`).

Built-in types map to recognisers:

- CREDIT_CARD, IBAN_CODE, PHONE_NUMBER, EMAIL_ADDRESS: presidio's, as shipped
  (Luhn, IBAN check sum, phone numbers valid in the configured regions);
- NATIONAL_ID: presidio's US SSN and UK NINO recognisers;
- DATE_OF_BIRTH, ADDRESS, PERSON: presidio ``PatternRecognizer`` s with vae's
  patterns (dates with a birth cue or a birth year; street addresses and
  postcodes; names after a cue) — what a pattern can do without a model;
- custom types: a ``PatternRecognizer`` per configured expression.
"""

from __future__ import annotations

import datetime
import importlib.util
import re
from dataclasses import dataclass
from typing import Any

from vae.redaction.config import RedactionConfig, RedactionUnavailable

MONTHS = ("january|february|march|april|may|june|july|august|september|october|november"
          "|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")  # fmt: skip
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:19|20)\d\d"
#: Full dates: 3 March 1980, 3rd of March 1980, March 3 1980, 03/03/1980, 1980-03-03.
DATE_PATTERNS = (
    rf"\b{_DAY}\s+(?:of\s+)?(?:{MONTHS})\.?,?\s+{_YEAR}\b",
    rf"\b(?:{MONTHS})\.?\s+(?:the\s+)?{_DAY},?\s+{_YEAR}\b",
    rf"\b{_DAY}[/.-](?:0?[1-9]|1[0-2])[/.-]{_YEAR}\b",
    rf"\b(?:0?[1-9]|1[0-2])[/.-]{_DAY}[/.-]{_YEAR}\b",
    rf"\b{_YEAR}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b",
)
BIRTH_CUES = re.compile(r"\b(born|birth|dob|d\.o\.b|birthday|date of birth)\b", re.IGNORECASE)
_STREET = ("street|st|road|rd|avenue|ave|lane|ln|drive|dr|boulevard|blvd|close|way|court|ct"
           "|place|pl|terrace|crescent|square|gardens|grove|hill|park|row|walk|mews|parkway"
           "|highway|hwy")  # fmt: skip
ADDRESS_PATTERNS = (
    # 221B Baker Street (, London)?
    rf"\b\d{{1,5}}[A-Za-z]?,?\s+(?:[A-Z][a-z]+\s+){{1,3}}(?i:{_STREET})\b\.?"
    r"(?:,?\s+[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)?",
    # UK postcodes: SW1A 1AA, M1 1AE
    r"\b(?:[A-Z]{1,2}\d[A-Z\d]?|GIR)\s*\d[A-Z]{2}\b",
    # US: state and ZIP after a town: Springfield, IL 62704
    r"\b[A-Z][a-z]+,?\s+[A-Z]{2}\s+\d{5}(?:-\d{4})?\b",
)
_NAME = r"[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?"
_NOT_NAMES = {"Sorry", "Calling", "Looking", "Here", "Fine", "Good", "Just", "Not", "Very",
              "The", "It", "Please", "Thanks", "Thank", "Sure", "Yes", "No", "Okay", "Ok",
              "Great", "Hello", "Hi", "Ringing", "Interested", "Afraid", "Glad", "Happy",
              "January", "February", "March", "April", "May", "June", "July", "August",
              "September", "October", "November", "December", "Monday", "Tuesday",
              "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "Today", "Tomorrow",
              "Support", "Customer", "Booking", "Account", "About"}  # fmt: skip
PERSON_PATTERNS = (
    rf"(?i:\b(?:my name is|my name's|name is|this is|i am|i'm|speaking with|"
    rf"talking to|ask for|called|name of)\s+)({_NAME}(?:\s+{_NAME}){{0,2}})",
    rf"\b(?:Mr|Mrs|Ms|Miss|Dr|Mister|Doctor|Sir|Madam)\.?\s+({_NAME}(?:\s+{_NAME})?)",
)


@dataclass(frozen=True)
class Hit:
    """A recogniser's finding: a type, a span of the text it read, a score."""

    entity: str
    start: int
    end: int
    score: float


def require_presidio() -> None:
    if importlib.util.find_spec("presidio_analyzer") is None:
        raise RedactionUnavailable("redaction needs presidio-analyzer: pip install 'vae[redact]'")


class Recognisers:
    """The recognisers a configuration asks for; :meth:`hits` runs them over one text."""

    def __init__(self, config: RedactionConfig) -> None:
        require_presidio()
        self.config = config
        #: (type vae reports, presidio recogniser, presidio entity it asks for, context words)
        self.items: list[tuple[str, Any, str, list[str]]] = []
        wanted = set(config.entities)
        for entity, recogniser in _built_in(config):
            if entity in wanted:
                self.items.append(
                    (entity, recogniser, recogniser.supported_entities[0], recogniser.context or [])
                )
        for custom in config.custom:
            self.items.append((custom.type, _custom(custom), custom.type, []))
        self.spoken_types = {c.type for c in config.custom if not c.spoken}

    def hits(self, text: str, *, spoken: bool = False) -> list[Hit]:
        """Every finding in ``text`` at or above the configured score (context-boosted)."""
        out: list[Hit] = []
        for entity, recogniser, asked, context in self.items:
            if spoken and entity in self.spoken_types:
                continue
            for r in recogniser.analyze(text, [asked], None):
                score = boost(text, r.start, float(r.score or 0.0), context)
                if entity == "DATE_OF_BIRTH" and not _birth_date(text, r.start, r.end):
                    continue
                if entity == "PERSON":
                    start, end = _name_span(text, r.start, r.end)
                    if start is None:
                        continue
                    out.append(Hit(entity, start, end, score))
                    continue
                if score >= self.config.min_score:
                    out.append(Hit(entity, r.start, r.end, score))
        return out


def boost(text: str, start: int, score: float, context: list[str]) -> float:
    """``score`` raised by 0.35 when a context word stands in the 60 characters before."""
    before = text[max(0, start - 60) : start].lower()
    if any(re.search(rf"\b{re.escape(w.strip())}", before) for w in context if w.strip()):
        return min(1.0, score + 0.35)
    return score


def _birth_date(text: str, start: int, end: int) -> bool:
    """A date of birth: a birth cue shortly before it, or a year from 1900 to 5 years ago."""
    if BIRTH_CUES.search(text[max(0, start - 50) : start]):
        return True
    year = re.findall(r"(?:19|20)\d\d", text[start:end])
    return bool(year) and 1900 <= int(year[-1]) <= datetime.date.today().year - 5


def _name_span(text: str, start: int, end: int) -> tuple[int | None, int]:
    """The name inside a cue match (``this is Ann Lee`` -> ``Ann Lee``); None: not a name."""
    found = None
    for pattern in PERSON_PATTERNS:
        m = re.compile(pattern).match(text, start)
        if m is not None and m.end() <= end + 1:
            found = m
            break
    if found is None:
        return None, end
    words = found.group(1).split()
    while words and words[-1] in _NOT_NAMES:
        words.pop()
    if not words or words[0] in _NOT_NAMES:
        return None, end
    name_start = found.start(1)
    return name_start, name_start + len(" ".join(words))


def _built_in(config: RedactionConfig) -> list[tuple[str, Any]]:
    import tldextract
    from presidio_analyzer import Pattern, PatternRecognizer
    from presidio_analyzer.predefined_recognizers import (
        CreditCardRecognizer,
        EmailRecognizer,
        IbanRecognizer,
        PhoneRecognizer,
        UkNinoRecognizer,
        UsSsnRecognizer,
    )

    # The suffix list that ships with tldextract: never the network.
    offline = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)

    class OfflineEmailRecognizer(EmailRecognizer):
        def validate_result(self, pattern_text: str) -> bool:
            return bool(offline(pattern_text.rsplit("@", 1)[-1]).suffix)

    def patterns(name: str, items: tuple[str, ...], score: float) -> list[Any]:
        return [Pattern(f"{name} {i}", p, score) for i, p in enumerate(items)]

    case_sensitive = re.MULTILINE | re.DOTALL
    return [
        ("CREDIT_CARD", CreditCardRecognizer()),
        ("IBAN_CODE", IbanRecognizer()),
        (
            "PHONE_NUMBER",
            PhoneRecognizer(supported_regions=tuple(config.phone_regions), leniency=1),
        ),
        ("EMAIL_ADDRESS", OfflineEmailRecognizer()),
        ("NATIONAL_ID", UsSsnRecognizer()),
        ("NATIONAL_ID", UkNinoRecognizer()),
        (
            "DATE_OF_BIRTH",
            PatternRecognizer(
                "DATE_OF_BIRTH",
                patterns=patterns("date", DATE_PATTERNS, 0.6),
                context=["born", "birth", "dob", "birthday"],
            ),
        ),
        (
            "ADDRESS",
            PatternRecognizer(
                "ADDRESS",
                patterns=patterns("address", ADDRESS_PATTERNS, 0.5),
                context=["address", "live", "street", "postcode", "zip"],
                global_regex_flags=case_sensitive,
            ),
        ),
        (
            "PERSON",
            PatternRecognizer(
                "PERSON",
                patterns=patterns("name", PERSON_PATTERNS, 0.5),
                global_regex_flags=case_sensitive,
            ),
        ),
    ]


def _custom(custom: Any) -> Any:
    from presidio_analyzer import Pattern, PatternRecognizer

    flags = re.MULTILINE | re.DOTALL | (re.IGNORECASE if custom.ignore_case else 0)
    return PatternRecognizer(
        custom.type,
        patterns=[Pattern(custom.type, custom.pattern, 0.9)],
        global_regex_flags=flags,
    )
