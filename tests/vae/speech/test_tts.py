"""The OpenAI-compatible speech engine against a loopback server, through the real client."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.tts_server import SpeechServer
from vae.speech.tts import PCM_RATE, OpenAISpeech, SpeechError, TtsSettings


def settings(url: str, cache: Path | None, voice: str = "nova") -> TtsSettings:
    return TtsSettings(
        base_url=url, model="tts-test", api_key="k", voice=voice, cache_dir=cache,
        max_retries=1, backoff_s=0.01, timeout_s=5,
    )  # fmt: skip


def test_speech_comes_back_as_pcm_and_the_second_run_hits_the_cache(tmp_path: Path) -> None:
    with SpeechServer() as server:
        first = OpenAISpeech(settings(server.base_url, tmp_path / "cache"))
        pcm = first.synthesise("Hola, quiero cambiar mi vuelo.")
        assert pcm.dtype == np.int16 and len(pcm) > PCM_RATE  # five words, ~1.5 s
        assert server.requests[0]["voice"] == "nova"
        assert server.requests[0]["response_format"] == "pcm"
        assert server.requests[0]["input"] == "Hola, quiero cambiar mi vuelo."
        # A new engine (a second run) with the same settings asks the endpoint nothing.
        second = OpenAISpeech(settings(server.base_url, tmp_path / "cache"))
        again = second.synthesise("Hola, quiero cambiar mi vuelo.")
        assert np.array_equal(pcm, again)
        assert len(server.requests) == 1 and second.cache_hits == 1 and second.requests == 0
        # Another voice or speed is another sound: never served from this cache entry.
        other = OpenAISpeech(settings(server.base_url, tmp_path / "cache", voice="onyx"))
        other.synthesise("Hola, quiero cambiar mi vuelo.")
        faster = second.synthesise("Hola, quiero cambiar mi vuelo.", speed=2.0)
        assert len(server.requests) == 3
        assert len(faster) < len(pcm)
        assert "k" not in str(first.describe().values())


def test_a_failing_endpoint_is_a_clear_speech_error_after_retries(tmp_path: Path) -> None:
    with SpeechServer(status=503) as server:
        engine = OpenAISpeech(settings(server.base_url, tmp_path))
        with pytest.raises(SpeechError, match=r"failed after 2 attempt\(s\).*HTTP 503"):
            engine.synthesise("hello")
        assert len(server.requests) == 2  # one retry of a 5xx
    with SpeechServer(status=400) as server:
        engine = OpenAISpeech(settings(server.base_url, tmp_path))
        with pytest.raises(SpeechError, match="HTTP 400"):
            engine.synthesise("hello")
        assert len(server.requests) == 1  # a 4xx is final
    assert not list(tmp_path.rglob("*.pcm")), "a failure is never cached"


def test_no_endpoint_is_refused_up_front() -> None:
    with pytest.raises(SpeechError, match="VAE_TTS_BASE_URL"):
        OpenAISpeech(TtsSettings(base_url=""))
