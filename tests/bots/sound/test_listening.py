"""Energy-based hearing of the peer: onsets, ends of turn, and which turns count."""

from __future__ import annotations

import numpy as np

from vae.bots.sound.listening import ListenSettings, PeerListener, rms_dbfs

RATE = 16000
FRAME = 320  # 20 ms


def frames(seconds: float, loud: bool) -> list[bytes]:
    n = int(seconds * RATE) // FRAME
    t = np.arange(FRAME) / RATE
    pcm = (np.sin(2 * np.pi * 200 * t) * (8000 if loud else 0)).astype("<i2").tobytes()
    return [pcm] * n


async def feed(listener: PeerListener, seconds: float, loud: bool) -> None:
    for f in frames(seconds, loud):
        await listener.feed(f)


def test_rms_dbfs_of_full_scale_sine_and_silence() -> None:
    t = np.arange(RATE) / RATE
    sine = (np.sin(2 * np.pi * 440 * t) * 32767).astype(np.int16)
    assert abs(rms_dbfs(sine) - (-3.01)) < 0.1
    assert rms_dbfs(np.zeros(100, dtype=np.int16)) < -100


async def test_a_turn_ends_after_the_configured_silence() -> None:
    listener = PeerListener(RATE, ListenSettings(end_silence_ms=500))
    await feed(listener, 1.0, loud=True)
    assert (listener.starts, listener.ends, listener.speaking) == (1, 0, True)
    await feed(listener, 0.4, loud=False)
    assert listener.ends == 0, "a pause shorter than end_silence_ms is not an end of turn"
    await feed(listener, 0.2, loud=False)
    assert listener.ends == 1 and not listener.speaking
    assert listener.last_start_offset == 0
    assert listener.last_end_offset == RATE  # the first quiet sample after 1 s of speech


async def test_clicks_shorter_than_min_speech_are_ignored() -> None:
    listener = PeerListener(RATE, ListenSettings(min_speech_ms=60))
    await feed(listener, 0.04, loud=True)
    await feed(listener, 1.0, loud=False)
    assert listener.starts == 0


async def test_a_turn_that_began_before_the_mark_does_not_count() -> None:
    """A barge-in never answers itself: only turns begun after our utterance count."""
    listener = PeerListener(RATE)
    await feed(listener, 0.5, loud=True)  # the peer is already talking ...
    mark = listener.starts  # ... when we start speaking
    await feed(listener, 0.8, loud=False)
    assert listener.completed_turn == 1 and not listener.completed_turn > mark
    await feed(listener, 0.5, loud=True)
    await feed(listener, 0.8, loud=False)
    await listener.wait_turn_end(mark)  # returns at once: the second turn began after it
    assert listener.completed_turn == 2
