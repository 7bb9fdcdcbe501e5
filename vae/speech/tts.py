"""Speech synthesis through an OpenAI-compatible ``/v1/audio/speech`` endpoint, cached on disk.

Why here, beside :mod:`vae.speech.stt`: the reference bots (which may import
only the contract) speak a scenario's ``user.voice: {engine: openai}`` with
it, and any OpenAI-compatible server works — hosted TTS, or a local Kokoro,
Piper or vLLM server speaking the same API. The real ``openai`` client is
used (``max_retries=0``, retried here: 429, 5xx, timeouts and connection
errors with exponential backoff; anything else is final). Every failure is a
:class:`SpeechError` that says what went wrong; the bot reports it as an
error and ends its side (the session's ``bot_error``).

Synthesised audio is cached by everything that shapes it — endpoint, model,
voice, speed, format and text (never the API key) — as raw PCM16 files under
``VAE_TTS_CACHE`` (default ``~/.cache/vae/tts``): a suite re-run asks the
endpoint nothing it has asked before, and a changed voice never reuses
another's audio. Settings come from ``VAE_TTS_BASE_URL``, ``VAE_TTS_MODEL``,
``VAE_TTS_API_KEY``, ``VAE_TTS_TIMEOUT_S``, ``VAE_TTS_MAX_RETRIES``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger("vae.speech.tts")

#: OpenAI's ``response_format: pcm`` is raw 16-bit little-endian mono at 24 kHz.
PCM_RATE = 24000


class SpeechError(Exception):
    """One synthesis failed (after retries), or the engine cannot work; says why."""


def _default_cache() -> Path:
    return Path(os.environ.get("VAE_TTS_CACHE") or Path.home() / ".cache" / "vae" / "tts")


@dataclass(frozen=True)
class TtsSettings:
    base_url: str = field(default_factory=lambda: os.environ.get("VAE_TTS_BASE_URL", ""))
    model: str = field(default_factory=lambda: os.environ.get("VAE_TTS_MODEL", "tts-1"))
    #: Sent as a bearer token; never cached, never part of ``describe()``.
    api_key: str = field(default_factory=lambda: os.environ.get("VAE_TTS_API_KEY", ""))
    voice: str = "alloy"
    #: OpenAI's ``speed`` (0.25-4.0; 1.0 is the voice's own rate).
    speed: float = 1.0
    timeout_s: float = field(
        default_factory=lambda: float(os.environ.get("VAE_TTS_TIMEOUT_S", "60"))
    )
    max_retries: int = field(
        default_factory=lambda: int(os.environ.get("VAE_TTS_MAX_RETRIES", "3"))
    )
    backoff_s: float = 0.5
    cache_dir: Path | None = field(default_factory=_default_cache)


class OpenAISpeech:
    """``synthesise(text) -> int16 PCM`` at :data:`PCM_RATE`, through the real client."""

    name = "openai"
    sample_rate = PCM_RATE

    def __init__(self, settings: TtsSettings) -> None:
        import openai  # here: ``vae --help`` and the bots' import stay light

        if not settings.base_url:
            raise SpeechError(
                "the openai speech engine needs an endpoint: set VAE_TTS_BASE_URL "
                "(e.g. http://127.0.0.1:8880/v1)"
            )
        self.settings = settings
        self._openai = openai
        self._client = openai.OpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key or "not-needed",
            timeout=settings.timeout_s,
            max_retries=0,
        )
        self._lock = threading.Lock()
        #: Requests sent to the endpoint (retries included) and cache hits.
        self.requests = 0
        self.cache_hits = 0

    def describe(self) -> dict[str, Any]:
        s = self.settings
        return {
            "engine": self.name,
            "base_url": s.base_url.rstrip("/"),
            "model": s.model,
            "voice": s.voice,
            "speed": s.speed,
            "response_format": "pcm",
            "sample_rate": PCM_RATE,
        }

    def cache_key(self, text: str, speed: float | None = None) -> str:
        shape = {**self.describe(), "speed": self.settings.speed if speed is None else speed}
        blob = json.dumps({**shape, "text": text}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def synthesise(self, text: str, speed: float | None = None) -> np.ndarray:
        """``text`` as PCM16 at :data:`PCM_RATE` (``speed``: this utterance's, if given)."""
        speed = self.settings.speed if speed is None else speed
        key = self.cache_key(text, speed)
        cache = self.settings.cache_dir
        path = cache / key[:2] / f"{key}.pcm" if cache else None
        if path is not None and path.exists():
            with self._lock:
                self.cache_hits += 1
            return np.frombuffer(path.read_bytes(), dtype="<i2").copy()
        pcm = self._request(text, speed)
        if path is not None:
            _write_atomically(path, pcm.tobytes())
        return pcm

    def _request(self, text: str, speed: float) -> np.ndarray:
        s = self.settings
        attempts = 0
        while True:
            attempts += 1
            with self._lock:
                self.requests += 1
            try:
                reply = self._client.audio.speech.create(
                    model=s.model, voice=s.voice, input=text, response_format="pcm", speed=speed
                )
                data = reply.read()
            except Exception as exc:
                if _retryable(self._openai, exc) and attempts <= s.max_retries:
                    delay = s.backoff_s * 2 ** (attempts - 1)
                    log.warning("speech synthesis failed (%s); retry %d in %.2fs", exc, attempts,
                                delay)  # fmt: skip
                    time.sleep(delay)  # a retry's backoff, in the synthesis thread
                    continue
                status = getattr(exc, "status_code", None)
                where = f" (HTTP {status})" if status else ""
                raise SpeechError(
                    f"speech synthesis at {s.base_url} failed after {attempts} attempt(s): "
                    f"{type(exc).__name__}{where}: {exc}"
                ) from exc
            if not data or len(data) % 2:
                raise SpeechError(
                    f"the endpoint at {s.base_url} sent {len(data)} bytes, not 16-bit PCM audio"
                )
            return np.frombuffer(data, dtype="<i2").copy()

    def close(self) -> None:
        self._client.close()


def _retryable(openai: Any, exc: Exception) -> bool:
    if isinstance(exc, openai.APITimeoutError | openai.APIConnectionError):
        return True
    if isinstance(exc, openai.APIStatusError):
        return bool(exc.status_code == 429 or exc.status_code >= 500)
    return False


def _write_atomically(path: Path, data: bytes) -> None:
    """Write the cache file whole or not at all (concurrent bots may race on one key)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except OSError as exc:  # a read-only cache costs a request next time, nothing else
        log.warning("could not cache synthesised speech at %s: %s", path, exc)
