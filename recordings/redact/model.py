"""What the store needs of a redaction, and what it records about one.

:class:`Redaction` is the shape of :class:`vae.redaction.redactor.Redactor`
as the store sees it (structural typing: the store imports nothing of it).
A :class:`LedgerEntry` says what was redacted where — the type, the field or
channel, the time span and how — and never the value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


class Found(Protocol):
    @property
    def entity(self) -> str: ...

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


class Redaction(Protocol):
    @property
    def pad_s(self) -> float:
        """Seconds masked before and after a span found from word timings."""

    def describe(self) -> dict[str, Any]:
        """Configuration, fingerprint and versions (stored with each pass)."""

    def text(self, text: str) -> tuple[str, Sequence[Found]]:
        """The text with placeholders, and what was found (types and spans)."""

    def value(self, value: Any, path: str = "$") -> tuple[Any, list[tuple[str, str]]]:
        """A JSON value redacted throughout, and ``(json path, type)`` per finding."""

    def words(
        self, text: str, found: list[Any], timed: list[dict[str, Any]]
    ) -> Sequence[tuple[Any, float | None, float | None]]:
        """Each finding's ``(finding, start_s, end_s)`` from timed words (None: not covered)."""

    def mask(self, samples: np.ndarray, rate: int, spans: list[tuple[int, int]]) -> np.ndarray:
        """``samples`` with the sample spans masked (tone or silence), same length."""


@dataclass(frozen=True)
class LedgerEntry:
    run_id: str
    session_id: str | None
    #: The field (``events.transcript.text``, ``final_states.state_json$.card``) or ``audio``.
    location: str
    entity: str
    channel: str = ""
    #: Session seconds: of the text's event, or of the masked audio.
    start_s: float | None = None
    end_s: float | None = None
    #: ``text``; for audio ``words`` (word timings), ``turn`` (the whole turn: no
    #: word timings), ``keys`` (keypad tones) or ``none`` (nothing could be masked).
    method: str = "text"
    note: str = ""
