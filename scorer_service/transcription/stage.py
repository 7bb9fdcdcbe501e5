"""Transcribing a recorded session, turn by turn: a stage of each session's scoring.

Why a stage of the scoring and not of the recording: a call recorded without
transcripts (an audio-only agent, an imported call) should become judgeable
later, with whatever recogniser is best then, without touching the recording.
So ``vae rescore --transcribe ENGINE`` runs this per session, before the
scorers: each recorded channel (``user`` and ``agent``: what each side said;
``to_agent``: what reached the agent, only when it reported nothing it heard)
is cut into turns by voice activity (:mod:`vae.recordings.vad`), each turn padded
by 0.2 s and sent to the engine (:mod:`vae.speech.stt`). The result is a
layer of :class:`~vae.recordings.models.TranscriptRecord` rows tied to the
scoring; the engine's configuration is stored with the scoring (its config
and versions), never the API key.

Answers are cached like the judge's: by a hash of the engine's configuration
(``describe()``), the sample rate and the turn's samples, in memory for this
scoring and in the store for the next, so a second rescore with the same
configuration makes no transcription calls (``no_cache`` asks again; fresh
text refreshes the cache). A failed turn keeps its error and no text: what
depends on it is ``unscored`` (``asr_error``), never silence.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from vae.recordings.models import Channel, TranscriptRecord, Verdict
from vae.recordings.vad import spurts
from vae.recordings.write.writer import RecordingWriter
from vae.scorer_service import signals
from vae.scorer_service.config import ConfigError
from vae.scorer_service.context import ScoringContext
from vae.scorer_service.heard.align import align
from vae.scorer_service.heard.normalise import words
from vae.scorer_service.scorer import SignalScore
from vae.scorer_service.transcription.words import ASR_ERROR, SAID_CHANNEL
from vae.speech.stt import SttConfigError, Transcriber, TranscriptionError, make_transcriber
from vae.speech.stt_settings import TranscriptionSettings

#: Silence kept around each turn sent to the engine.
PAD_S = 0.2
#: Channels a session's audio is loaded with when the stage runs.
CHANNELS = (Channel.USER, Channel.AGENT, Channel.TO_AGENT)

CacheGet = Callable[[str], Awaitable[str | None]]
CachePut = Callable[[str, str, dict[str, Any], str], Awaitable[None]]


@dataclass
class StageStats:
    turns: int = 0
    cache_hits: int = 0
    errors: int = 0
    audio_s: float = 0.0


class TranscriptionStage:
    """One engine for one scoring; :meth:`run` once per session."""

    def __init__(
        self, settings: TranscriptionSettings, cache_get: CacheGet, cache_put: CachePut
    ) -> None:
        self.engine = _engine(settings)
        self.settings = settings
        self.describe = self.engine.describe()
        self.stats = StageStats()
        self._memory: dict[str, str] = {}
        self._get, self._put = cache_get, cache_put

    async def close(self) -> None:
        await self.engine.close()

    def cache_key(self, samples: np.ndarray, rate: int) -> str:
        digest = hashlib.sha256()
        digest.update(json.dumps(self.describe, sort_keys=True).encode())
        digest.update(str(rate).encode())
        digest.update(np.ascontiguousarray(samples, dtype="<i2").tobytes())
        return digest.hexdigest()

    async def _one(self, samples: np.ndarray, rate: int) -> tuple[str, str, bool]:
        """(text, error, cached) of one turn."""
        key = self.cache_key(samples, rate)
        if not self.settings.no_cache:
            hit = self._memory.get(key)
            if hit is None:
                hit = await self._get(key)
            if hit is not None:
                self.stats.cache_hits += 1
                return hit, "", True
        try:
            text = await self.engine.transcribe(samples, rate)
        except TranscriptionError as exc:
            self.stats.errors += 1
            return "", str(exc), False
        self._memory[key] = text
        await self._put(key, self.engine.name, self.describe, text)
        return text, "", False

    def channels(self, ctx: ScoringContext) -> list[str]:
        """What to transcribe: what each side said, and what reached a silent listener."""
        wanted = [str(Channel.USER), str(Channel.AGENT)]
        if not any(t.side == "agent" for t in ctx.heard):
            wanted.append(str(Channel.TO_AGENT))
        return [c for c in wanted if c in ctx.audio and len(ctx.audio[c].samples)]

    async def run(self, ctx: ScoringContext, scoring_id: str) -> list[TranscriptRecord]:
        """Transcribe ``ctx``'s channels into ``ctx.asr``; return the layer's rows."""
        jobs: list[tuple[str, int, int, int, np.ndarray, int]] = []
        chosen = self.channels(ctx)
        for channel in chosen:
            audio = ctx.audio[channel]
            rate, samples = audio.sample_rate, audio.samples
            pad = round(PAD_S * rate)
            for i, s in enumerate(spurts(samples, rate)):
                piece = samples[max(0, s.start - pad) : s.end + pad]
                jobs.append((channel, i, s.start, s.end, piece, rate))
                self.stats.audio_s += (s.end - s.start) / rate
        answers = await asyncio.gather(*(self._one(piece, rate) for *_, piece, rate in jobs))
        self.stats.turns += len(jobs)
        rows = [
            TranscriptRecord(
                scoring_id, ctx.session.session_id, channel, i,
                round(start / rate, 3), round(end / rate, 3), text, error, cached,
            )
            for (channel, i, start, end, _, rate), (text, error, cached) in zip(
                jobs, answers, strict=True
            )
        ]  # fmt: skip
        ctx.asr, ctx.asr_channels, ctx.asr_engine = rows, chosen, self.describe
        return rows

    def counts(self) -> dict[str, float]:
        """What this stage did in this process (summed over processes by the runner)."""
        s = self.stats
        return {
            "requests": self.engine.requests,
            "cache_hits": s.cache_hits,
            "errors": s.errors,
            "turns": s.turns,
            "audio_s": s.audio_s,
            # Seconds the engine spent on the calls it made (audio_s / busy_s: × real time).
            "busy_s": self.engine.busy_s,
        }


def wer_score(ctx: ScoringContext) -> SignalScore | None:
    """``transcription.wer``: the transcription against what each side's bot reported saying."""
    if not ctx.asr_channels:
        return None
    words_total = errors_total = 0
    sides: dict[str, Any] = {}
    for side, channel in SAID_CHANNEL.items():
        said = " ".join(t.text for t in ctx.bot_transcripts if t.side == side)
        turns = [t for t in ctx.asr if t.channel == channel]
        if not said.strip() or channel not in ctx.asr_channels or any(t.error for t in turns):
            continue
        a = align(words(said), words(" ".join(t.text for t in turns)))
        sides[side] = {"words": a.ref_words, "errors": a.errors, "wer": round(a.wer, 4)}
        words_total += a.ref_words
        errors_total += a.errors
    failed = [f"{t.channel} turn {t.turn + 1}: {t.error}" for t in ctx.asr if t.error]
    detail: dict[str, Any] = {
        "engine": ctx.asr_engine, "sides": sides, "words": words_total, "errors": errors_total,
        "turns": len(ctx.asr), "failed_turns": failed[:20],
    }  # fmt: skip
    value = errors_total / words_total if words_total else None
    return SignalScore(signals.TRANSCRIPTION_WER, Verdict.NOT_APPLICABLE, value, detail)


def mark_asr_errors(
    results: list[SignalScore], ctx: ScoringContext, *, judge_reads_conversation: bool
) -> list[SignalScore]:
    """The judge's signals ``unscored`` (``asr_error``) when the conversation it read has holes."""
    errors = ctx.conversation_errors
    if not errors or not judge_reads_conversation:
        return results
    reason = (
        f"{ASR_ERROR}: {len(errors)} turn(s) of the conversation could not be "
        f"transcribed: {errors[0]}"
    )
    out = []
    for r in results:
        if (
            r.signal in (signals.NL_ASSERTION, signals.JUDGE_PASSED)
            and r.verdict is not Verdict.NOT_APPLICABLE
        ):
            detail = {**r.detail, "failed_turns": errors[:20], "verdict_without_it": str(r.verdict)}
            r = replace(r, verdict=Verdict.UNSCORED, value=None, detail=detail, error=reason)
        out.append(r)
    return out


def transcription_summary(stage: dict[str, Any], outcomes: list[Any]) -> dict[str, Any]:
    """The scoring summary's ``transcription`` block: the stage's counts and the pooled WER.

    ``stage`` is the engine's description and the counts of every process that
    ran the stage (:meth:`TranscriptionStage.counts`, summed).

    ``outcomes`` are the scored sessions
    (:class:`vae.scorer_service.ledger.aggregate.SessionOutcome`).
    """
    words_total = errors_total = 0
    for o in outcomes:
        score = o.get(signals.TRANSCRIPTION_WER)
        if score is not None:
            words_total += int(score.detail.get("words") or 0)
            errors_total += int(score.detail.get("errors") or 0)
    wer = round(errors_total / words_total, 4) if words_total else None
    rounded = {k: round(v, 3) if isinstance(v, float) else v for k, v in stage.items()}
    return {**rounded, "words": words_total, "word_errors": errors_total, "wer": wer}


async def describe_stage(settings: TranscriptionSettings) -> dict[str, Any] | None:
    """The engine and parameters ``settings`` ask for (None: no ``--transcribe``).

    Builds the engine once, so a bad configuration fails before a scoring is
    created; each process that scores sessions builds its own (:func:`make_stage`).
    """
    if not settings.enabled:
        return None
    engine = _engine(settings)
    describe = engine.describe()
    await engine.close()
    return describe


def _engine(settings: TranscriptionSettings) -> Transcriber:
    """The engine ``settings`` name (ConfigError when it cannot be built)."""
    try:
        return make_transcriber(settings)
    except SttConfigError as exc:
        raise ConfigError(str(exc)) from exc


def make_stage(
    settings: TranscriptionSettings,
    cache_get: Callable[[str], Awaitable[str | None]],
    writer: RecordingWriter,
) -> TranscriptionStage | None:
    """The stage ``settings`` ask for (None: no ``--transcribe``), cached in the store.

    ``cache_get`` looks a key up in the store's transcription cache (the
    caller owns the reader it reads with); answers are written by ``writer``.
    """
    if not settings.enabled:
        return None

    async def put(key: str, engine: str, describe: dict[str, Any], text: str) -> None:
        await writer.put_transcription_cache(key, engine, describe, text)

    return TranscriptionStage(settings, cache_get, put)
