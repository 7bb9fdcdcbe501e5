"""Transcription engines: PCM16 in, text out, behind one small protocol.

Two engines, chosen by name (``ENGINES``), each built from one
:class:`~vae.speech.stt_settings.TranscriptionSettings` (the type the scorer
stores with a scoring, too):

- ``openai`` — any OpenAI-compatible ``/v1/audio/transcriptions`` endpoint
  (hosted STT, or a local faster-whisper / whisper.cpp / vLLM server) through
  the real ``openai`` client. The client is built with ``max_retries=0`` and
  retried here, with the judge's policy: 429, 5xx, timeouts and connection
  errors are retried with exponential backoff up to ``max_retries`` times;
  anything else (4xx, a reply without text) is final.
- ``pocketsphinx`` — an embedded offline recogniser whose package ships its
  English model (``pip install 'vae[asr]'``). Poor on synthetic voices, but
  it needs no network and no weights download.

Every failure is a :class:`TranscriptionError` saying what went wrong; the
caller decides what it means (the scorer: ``asr_error``, never an empty
"said nothing"; a bot: it tells its LLM the turn could not be transcribed).
``describe()`` is the engine's configuration as plain data (engine, model,
parameters, never the API key): the scorer stores it with the scoring and keys
its cache on it, so a changed configuration never reuses another's text.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import logging
import multiprocessing
import time
import wave
from typing import Any, Protocol

import numpy as np

from vae.speech.stt_settings import ENGINES, TranscriptionSettings

log = logging.getLogger("vae.speech.stt")

#: pocketsphinx's bundled English model decodes 16 kHz audio.
SPHINX_RATE = 16000


class TranscriptionError(Exception):
    """One transcription failed (after retries); the message says why."""


class SttConfigError(ValueError):
    """Settings that can never work: an unknown engine, a missing model, a missing package."""


class Transcriber(Protocol):
    """What bots and the scorer call; :func:`make_transcriber` builds one."""

    name: str
    #: Requests sent to the engine (retries included), and the seconds the engine
    #: spent on them (a request's own time, not its wait for a free slot).
    requests: int
    busy_s: float

    def describe(self) -> dict[str, Any]: ...

    async def transcribe(self, samples: np.ndarray, sample_rate: int) -> str: ...

    async def close(self) -> None: ...


def wav_bytes(samples: np.ndarray, sample_rate: int) -> bytes:
    """Mono PCM16 samples as a WAV file in memory (what the transcription API uploads)."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(int(sample_rate))
        w.writeframes(np.asarray(samples, dtype="<i2").tobytes())
    return out.getvalue()


def _retryable(openai: Any, exc: Exception) -> bool:
    if isinstance(exc, openai.APITimeoutError | openai.APIConnectionError):
        return True
    if isinstance(exc, openai.APIStatusError):
        return bool(exc.status_code == 429 or exc.status_code >= 500)
    return False


def _describe_error(exc: Exception, attempts: int) -> str:
    status = getattr(exc, "status_code", None)
    where = f" (HTTP {status})" if status else ""
    return f"transcription failed after {attempts} attempt(s): {type(exc).__name__}{where}: {exc}"


class OpenAITranscriber:
    """An OpenAI-compatible ``/audio/transcriptions`` endpoint."""

    name = "openai"

    def __init__(self, settings: TranscriptionSettings) -> None:
        import openai  # imported here: ``vae --help`` and the bots' import stay light

        if not settings.base_url or not settings.model:
            raise SttConfigError("the openai transcription engine needs a base URL and a model")
        self.settings = settings
        self._openai = openai
        self._client = openai.AsyncOpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key or "not-needed",
            timeout=settings.timeout_s,
            max_retries=0,
        )
        self._limit = asyncio.Semaphore(max(1, settings.concurrency))
        self.requests = 0
        self.busy_s = 0.0

    def describe(self) -> dict[str, Any]:
        s = self.settings
        return {
            "engine": self.name,
            "base_url": s.base_url.rstrip("/"),
            "model": s.model,
            "language": s.language,
            "temperature": 0.0,
            "response_format": "json",
        }

    async def transcribe(self, samples: np.ndarray, sample_rate: int) -> str:
        audio = wav_bytes(samples, sample_rate)
        extra: dict[str, Any] = (
            {"language": self.settings.language} if self.settings.language else {}
        )
        attempts = 0
        while True:
            attempts += 1
            self.requests += 1
            try:
                async with self._limit:
                    started = time.perf_counter()
                    try:
                        reply = await self._client.audio.transcriptions.create(
                            model=self.settings.model,
                            file=("turn.wav", audio, "audio/wav"),
                            response_format="json",
                            temperature=0.0,
                            **extra,
                        )
                    finally:
                        self.busy_s += time.perf_counter() - started
            except Exception as exc:
                if _retryable(self._openai, exc) and attempts <= self.settings.max_retries:
                    delay = self.settings.backoff_s * 2 ** (attempts - 1)
                    log.warning(
                        "transcription failed (%s); retry %d in %.2fs", exc, attempts, delay
                    )
                    await asyncio.sleep(delay)
                    continue
                raise TranscriptionError(_describe_error(exc, attempts)) from exc
            text = getattr(reply, "text", None)
            if not isinstance(text, str):
                shown = str(reply)[:200]
                raise TranscriptionError(f"the endpoint's reply holds no text: {shown!r}")
            return text.strip()

    async def close(self) -> None:
        await self._client.close()


_decoder: Any = None


def _sphinx_start() -> None:
    """A worker process's one decoder (pocketsphinx holds the GIL while it decodes)."""
    global _decoder
    import pocketsphinx

    _decoder = pocketsphinx.Decoder(samprate=SPHINX_RATE, loglevel="FATAL")


def _sphinx_decode(pcm: bytes) -> tuple[str, float]:
    """(text, seconds spent decoding) of one turn."""
    started = time.perf_counter()
    _decoder.start_utt()
    _decoder.process_raw(pcm, full_utt=True)
    _decoder.end_utt()
    hyp = _decoder.hyp()
    return (str(hyp.hypstr) if hyp is not None else ""), time.perf_counter() - started


class PocketsphinxTranscriber:
    """pocketsphinx with its bundled US English model, decoding in worker processes.

    The decoder holds the GIL for as long as it decodes (seconds per turn), so
    it runs in ``concurrency`` worker processes of its own: a bot's real-time
    audio and the scorer's event loop never stall behind it.
    """

    name = "pocketsphinx"

    def __init__(self, settings: TranscriptionSettings) -> None:
        import importlib.util

        if importlib.util.find_spec("pocketsphinx") is None:
            raise SttConfigError(
                "the pocketsphinx engine needs the pocketsphinx package: pip install 'vae[asr]'"
            )
        if settings.language and not settings.language.lower().startswith("en"):
            raise SttConfigError("pocketsphinx ships only its English model (language 'en')")
        if settings.model and settings.model != "en-us":
            raise SttConfigError("pocketsphinx ships one model, 'en-us'")
        from importlib.metadata import version

        self.settings = settings
        self._version = version("pocketsphinx")
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self.requests = 0
        self.busy_s = 0.0

    def describe(self) -> dict[str, Any]:
        return {
            "engine": self.name,
            "model": "en-us",
            "version": self._version,
            "sample_rate": SPHINX_RATE,
        }

    def _workers(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._pool is None:
            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=max(1, self.settings.concurrency),
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_sphinx_start,
            )
        return self._pool

    async def transcribe(self, samples: np.ndarray, sample_rate: int) -> str:
        pcm = to_rate(samples, sample_rate, SPHINX_RATE).tobytes()
        self.requests += 1
        try:
            # Submitting may spawn a worker (a second or so): off the event loop too.
            future = await asyncio.to_thread(self._workers().submit, _sphinx_decode, pcm)
            text, seconds = await asyncio.wrap_future(future)
        except Exception as exc:  # the decoder's or the worker's failure, as one message
            raise TranscriptionError(f"pocketsphinx failed: {exc!r}") from exc
        self.busy_s += seconds  # decoding only: not the wait for a free worker
        return str(text).strip()

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, True, cancel_futures=True)


def to_rate(samples: np.ndarray, rate: int, target: int) -> np.ndarray:
    """Mono int16 samples resampled from ``rate`` to ``target`` (unchanged when equal)."""
    x = np.asarray(samples, dtype=np.int16)
    if rate == target or len(x) == 0:
        return x
    import soxr

    y = soxr.resample(x.astype(np.float32) / 32768.0, rate, target)
    return np.asarray(np.clip(y * 32768.0, -32768, 32767), dtype=np.int16)


def make_transcriber(settings: TranscriptionSettings) -> Transcriber:
    """The engine ``settings.engine`` names; :class:`SttConfigError` when it cannot work."""
    if settings.engine == "openai":
        return OpenAITranscriber(settings)
    if settings.engine == "pocketsphinx":
        return PocketsphinxTranscriber(settings)
    raise SttConfigError(
        f"unknown transcription engine {settings.engine!r} (choose from {', '.join(ENGINES)})"
    )
