"""What a runner is: where the per-session scoring work runs, what it is given, what it returns.

A *runner* scores a plan's sessions into a scoring that already exists and
hands each :class:`SessionOutcome` to ``emit`` as it is stored; the rescore
(:mod:`vae.scorer_service.scoring.rescore`) builds the summary from what it
was handed and from the :class:`WorkStats` the runner sums over its
processes. Apart from :mod:`vae.scorer_service.scoring.session_work` (the work
itself, and :class:`~vae.scorer_service.scoring.session_work.LocalRunner`)
because this contract is shared by every runner — the local one, the Ray one
(:mod:`vae.scorer_service.ray_scoring`) and those the scorer service is given
— and changes only when what runners exchange does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from vae.recordings.models import SessionRecord
from vae.recordings.scenarios.model import Scenario
from vae.recordings.write.writer import RecordingWriter
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.judge.client import JudgeStats
from vae.scorer_service.ledger.aggregate import SessionOutcome

#: One planned session: its record and its effective scenario.
Planned = tuple[SessionRecord, Scenario]
Emit = Callable[[SessionOutcome], Awaitable[None]]


@dataclass
class ScoringJob:
    """What every session of one scoring shares, in whichever process scores it."""

    #: The store's locator (a path, or a URL once other back ends exist): opaque here.
    locator: str
    scoring_id: str
    config: ScoringConfig
    run_options: dict[str, Any] = field(default_factory=dict)
    with_audio: bool = True


class SessionRunner(Protocol):
    """Where the per-session scoring work runs (this process, or Ray workers)."""

    async def prepare(self) -> None:
        """Get ready (connect) before the scoring is created: raise here, nothing is written."""

    async def run(
        self, job: ScoringJob, sessions: Sequence[Planned], writer: RecordingWriter, emit: Emit
    ) -> WorkStats:
        """Score ``sessions`` into ``job.scoring_id``; ``emit`` each outcome once it is stored."""


@dataclass
class WorkStats:
    """What scoring used, summed over the processes that did it."""

    judge: JudgeStats = field(default_factory=JudgeStats)
    #: The transcription stage's counts (``TranscriptionStage.counts``); empty without one.
    asr: dict[str, float] = field(default_factory=dict)

    def add(self, more: WorkStats) -> None:
        self.judge.requests += more.judge.requests
        self.judge.cache_hits += more.judge.cache_hits
        self.judge.errors += more.judge.errors
        for key, value in more.asr.items():
            self.asr[key] = self.asr.get(key, 0) + value

    def since(self, seen: WorkStats) -> WorkStats:
        """What was used after ``seen`` was taken."""
        j, s = self.judge, seen.judge
        asr = {k: v - seen.asr.get(k, 0) for k, v in self.asr.items()}
        return WorkStats(
            JudgeStats(j.requests - s.requests, j.cache_hits - s.cache_hits, j.errors - s.errors),
            asr,
        )


def session_concurrency(config: ScoringConfig) -> int:
    """Sessions scored at once in one process (the judge's concurrency, at least 2)."""
    return max(2, config.judge.concurrency if config.judge.enabled else 2)
