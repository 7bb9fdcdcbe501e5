"""Typed placeholders in text and JSON values: what every redacting caller uses.

:class:`Redactor` is the one object the bridge, the scorer, the importer and
``vae redact`` hold. Its methods take and return plain data, so the store's
rewrite (:mod:`vae.recordings.redact`) uses it as callables without importing
this package:

- :meth:`Redactor.text` — a string with each finding replaced by ``<TYPE>``,
  and the findings (types and spans of the original, never the values);
- :meth:`Redactor.value` — a JSON value with every string (keys included) and
  every long number redacted, and where each finding was (a JSON path);
- :meth:`Redactor.words` / :meth:`Redactor.mask` — the timed words a finding
  covers, and audio samples with spans replaced by tone or silence.

Answers are cached by text: a run repeats its scenario and its lines.
"""

from __future__ import annotations

import functools
import re
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from vae.redaction import audio, words
from vae.redaction.config import RedactionConfig
from vae.redaction.detect import Detector, Finding
from vae.redaction.entities import placeholder

#: Numbers shorter than this are never personal data on their own (a count, a price).
_MIN_NUMBER_DIGITS = 6
#: A number is read as personal data only under a key like these: elsewhere a long
#: number is a time, an offset or an id, and a nanosecond clock passes the Luhn
#: check one time in ten.
_NUMBER_KEYS = re.compile(
    r"card|pan$|acct|account|iban|phone|tel|mobile|msisdn|ssn|nino|passport|social|dob|birth",
    re.IGNORECASE,
)


class Redactor:
    """Detection and replacement for one configuration (build with :func:`make_redactor`)."""

    def __init__(self, config: RedactionConfig) -> None:
        self.config = config
        self.detector = Detector(config)
        self._cached = functools.lru_cache(maxsize=4096)(self._text)

    def close(self) -> None:
        self.detector.close()

    def describe(self) -> dict[str, Any]:
        """What redacted (configuration, fingerprint, versions): stored with the ledger."""
        versions = {}
        for package in ("presidio-analyzer", "phonenumbers"):
            try:
                versions[package] = version(package)
            except PackageNotFoundError:  # pragma: no cover - the extra is installed
                versions[package] = ""
        return {
            "config": self.config.to_dict(),
            "fingerprint": self.config.fingerprint(),
            "versions": versions,
        }

    def _text(self, text: str) -> tuple[str, tuple[Finding, ...]]:
        found = self.detector.find(text)
        out = text
        for f in sorted(found, key=lambda f: f.start, reverse=True):
            out = out[: f.start] + placeholder(f.entity) + out[f.end :]
        return out, tuple(found)

    def text(self, text: str) -> tuple[str, list[Finding]]:
        """``text`` with each finding replaced by its placeholder, and the findings."""
        redacted, found = self._cached(text)
        return redacted, list(found)

    def value(self, value: Any, path: str = "$") -> tuple[Any, list[tuple[str, str]]]:
        """A JSON value redacted throughout, and ``(json path, type)`` of every finding.

        Keys are redacted too (a state keyed by e-mail address); two keys that
        redact alike stay apart (``<EMAIL_ADDRESS>``, ``<EMAIL_ADDRESS>#2``).
        A whole number of six digits or more under a key that names personal
        data (``card_number``, ``phone``) becomes its placeholder (a string);
        other numbers are kept (times, offsets, ids).
        """
        found: list[tuple[str, str]] = []
        return self._value(value, path, found, ""), found

    def _value(self, value: Any, path: str, found: list[tuple[str, str]], key: str) -> Any:
        if isinstance(value, str):
            out, hits = self.text(value)
            found.extend((path, f.entity) for f in hits)
            return out
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int | float):
            digits = str(value)
            if (
                not isinstance(value, int)
                or len(digits) < _MIN_NUMBER_DIGITS
                or not _NUMBER_KEYS.search(key)
            ):
                return value
            out, hits = self.text(digits)
            if not hits:
                return value
            found.extend((path, f.entity) for f in hits)
            return out
        if isinstance(value, list):
            return [self._value(v, f"{path}[{i}]", found, key) for i, v in enumerate(value)]
        if isinstance(value, dict):
            result: dict[str, Any] = {}
            for key, item in value.items():
                new_key, hits = self.text(str(key))
                found.extend((f"{path}.<key>", f.entity) for f in hits)
                base, n = new_key, 1
                while new_key in result:
                    n += 1
                    new_key = f"{base}#{n}"
                result[new_key] = self._value(item, f"{path}.{new_key}", found, str(key))
            return result
        return value

    def words(
        self, text: str, found: list[Finding], timed: list[dict[str, Any]]
    ) -> list[tuple[Finding, float, float] | tuple[Finding, None, None]]:
        """Each finding's time span from the timed words of ``text`` (None: not covered)."""
        return words.spans(text, found, timed)

    def mask(self, samples: np.ndarray, rate: int, spans: list[tuple[int, int]]) -> np.ndarray:
        """``samples`` with each ``(start, end)`` sample span masked as configured."""
        a = self.config.audio
        return audio.mask(samples, rate, spans, a.mask, a.tone_hz, a.level_dbfs)

    @property
    def pad_s(self) -> float:
        return self.config.audio.pad_ms / 1000.0


def make_redactor(config: RedactionConfig | None = None) -> Redactor:
    """A redactor for ``config`` (defaults: every built-in type).

    Raises :class:`~vae.redaction.config.RedactionUnavailable` without the
    ``redact`` extra.
    """
    return Redactor(config or RedactionConfig())
