"""The scorer protocol, modelled on inspect_ai's scorers.

A scorer is a small object with a ``name`` (what ``--scorer`` selects), a
``version`` (stored with the scoring, bumped whenever its semantics change so
two scorings can be told apart) and ``async score(ctx)`` returning one
:class:`SignalScore` per signal it decides. A scorer never raises for bad data
in a recording: it returns a failed or unscored verdict that says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from vae.recordings.models import Verdict
from vae.scorer_service.context import ScoringContext


@dataclass(frozen=True)
class SignalScore:
    signal: str
    verdict: Verdict
    value: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    error: str = ""


class Scorer(Protocol):
    name: str
    version: str
    #: True when the scorer reads the recorded audio (loading it is the costly part).
    needs_audio: bool

    async def score(self, ctx: ScoringContext) -> list[SignalScore]: ...


def passed_or_failed(ok: bool) -> Verdict:
    return Verdict.PASSED if ok else Verdict.FAILED


def info(signal: str, value: float | None, detail: dict[str, Any] | None = None) -> SignalScore:
    """A measurement rather than a verdict (timing, tokens)."""
    return SignalScore(signal, Verdict.NOT_APPLICABLE, value, detail or {})
