"""The transcription engines behind vae.speech.stt, for real.

``openai`` runs through the real ``openai`` client against a loopback server
speaking the real ``/v1/audio/transcriptions`` API (multipart WAV upload,
JSON reply): retried on 5xx and timeouts as the judge is, final on 4xx, and a
reply without text is an error, never an empty transcript. ``pocketsphinx``
decodes in worker processes: the event loop keeps running while it decodes.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import os
import time
import wave

import numpy as np
import pytest

from tests.stt_server import ByDuration, Reply, TranscriptionServer
from vae.speech.stt import (
    SttConfigError,
    TranscriptionError,
    make_transcriber,
    to_rate,
    wav_bytes,
)
from vae.speech.stt_settings import TranscriptionSettings


def tone(seconds: float, rate: int = 16000) -> np.ndarray:
    t = np.arange(round(seconds * rate)) / rate
    return (np.sin(2 * np.pi * 220 * t) * 9000).astype(np.int16)


def settings(url: str, **kw: object) -> TranscriptionSettings:
    base = {"timeout_s": 1.0, "max_retries": 2, "backoff_s": 0.01}
    return TranscriptionSettings("openai", url, "whisper-1", **{**base, **kw})  # type: ignore[arg-type]


async def test_openai_engine_uploads_a_wav_and_reads_the_text() -> None:
    with TranscriptionServer(ByDuration({1.0: "one second", 2.0: "two seconds"})) as server:
        engine = make_transcriber(settings(server.base_url, language="en", api_key="k"))
        try:
            assert await engine.transcribe(tone(2.0, 8000), 8000) == "two seconds"
            assert await engine.transcribe(tone(1.0), 16000) == "one second"
        finally:
            await engine.close()
        first = server.uploads[0]
    assert first.sample_rate == 8000 and first.seconds == pytest.approx(2.0)
    assert first.fields["model"] == "whisper-1" and first.fields["language"] == "en"
    assert engine.requests == 2 and engine.busy_s > 0
    described = engine.describe()
    assert described["engine"] == "openai" and described["model"] == "whisper-1"
    assert "k" not in described.values(), "the API key is never part of the configuration"


@pytest.mark.parametrize(
    ("reply", "calls", "message"),
    [
        (Reply(status=503, body=b'{"error": {"message": "down"}}'), 3, "HTTP 503"),
        (Reply(delay_s=3.0), 3, "APITimeoutError"),
        (Reply(status=400, body=b'{"error": {"message": "bad audio"}}'), 1, "HTTP 400"),
        (Reply(body=b"<html>oops</html>", content_type="text/html"), 1, "holds no text"),
        (Reply(body=b'{"transcript": "wrong key"}'), 1, "holds no text"),
    ],
    ids=["5xx-retried", "timeout-retried", "4xx-final", "garbage", "json-without-text"],
)
async def test_openai_engine_failures_are_errors_after_the_judges_retries(
    reply: Reply, calls: int, message: str
) -> None:
    with TranscriptionServer(lambda _upload: reply) as server:
        engine = make_transcriber(settings(server.base_url))
        try:
            with pytest.raises(TranscriptionError, match=message):
                await engine.transcribe(tone(0.5), 16000)
        finally:
            await engine.close()
        assert server.calls == calls


async def test_a_refused_connection_is_an_error_after_retries() -> None:
    from tests.helpers import closed_port

    with closed_port() as port:
        engine = make_transcriber(settings(f"http://127.0.0.1:{port}/v1", max_retries=1))
        try:
            with pytest.raises(TranscriptionError, match="APIConnectionError"):
                await engine.transcribe(tone(0.5), 16000)
        finally:
            await engine.close()
    assert engine.requests == 2


def test_settings_that_can_never_work_are_refused() -> None:
    with pytest.raises(SttConfigError, match="unknown transcription engine 'whisperx'"):
        make_transcriber(TranscriptionSettings("whisperx"))
    with pytest.raises(SttConfigError, match="needs a base URL and a model"):
        make_transcriber(TranscriptionSettings("openai", base_url="http://127.0.0.1:1/v1"))
    with pytest.raises(SttConfigError, match="only its English model"):
        make_transcriber(TranscriptionSettings("pocketsphinx", language="de"))


def test_wav_bytes_and_resampling() -> None:
    samples = tone(0.25, 8000)
    with wave.open(io.BytesIO(wav_bytes(samples, 8000))) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (8000, 1, 2)
        assert np.array_equal(np.frombuffer(w.readframes(w.getnframes()), "<i2"), samples)
    assert len(to_rate(samples, 8000, 16000)) == 2 * len(samples)
    assert to_rate(samples, 8000, 8000) is not None


def require_pocketsphinx() -> None:
    if importlib.util.find_spec("pocketsphinx") is None:
        message = "pocketsphinx not installed; install it with: pip install 'vae[asr]'"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


async def test_pocketsphinx_decodes_off_the_event_loop() -> None:
    require_pocketsphinx()
    engine = make_transcriber(TranscriptionSettings("pocketsphinx", concurrency=1))
    noise = (np.random.default_rng(1).standard_normal(16000 * 4) * 3000).astype(np.int16)
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), 0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(ticker())
            text = await engine.transcribe(noise, 22050)  # resampled to 16 kHz first
            text += await engine.transcribe(noise, 16000)
            done.set()
    finally:
        await engine.close()
    assert isinstance(text, str)
    assert engine.requests == 2 and engine.busy_s > 0
    assert engine.describe()["model"] == "en-us"
    # Seconds of decoding never stall the loop (it holds the GIL: a process of its own).
    assert max(gaps) < 0.5, max(gaps)
