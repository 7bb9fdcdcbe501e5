"""Turn counting from received audio: jitter never splits a spurt; real pauses do."""

from __future__ import annotations

import numpy as np

from tests.bridge_service.bots import tone
from vae.bridge_service.session.turns import TalkSpurtCounter

RATE = 16000
CHUNK = 320  # 20 ms


def feed(counter: TalkSpurtCounter, pcm: bytes, t0_ns: int, gaps_ms: list[float]) -> int:
    """Send ``pcm`` in 20 ms chunks, each arriving ``gaps_ms[i]`` after the previous."""
    t = t0_ns
    for i, start in enumerate(range(0, len(pcm), 2 * CHUNK)):
        t += int(gaps_ms[i % len(gaps_ms)] * 1e6)
        counter.add(pcm[start : start + 2 * CHUNK], t)
    return t


def test_jittered_arrivals_are_one_turn() -> None:
    counter = TalkSpurtCounter(RATE)
    rng = np.random.default_rng(1)
    # Every chunk a little late (a loaded sender), some very late: still one spurt.
    gaps = list(21 + rng.uniform(0, 40, 200))
    feed(counter, tone(2.0, RATE).tobytes(), 1_000_000_000, gaps)
    assert counter.turns == 1


def test_pauses_separate_turns_also_when_the_sender_stops_sending() -> None:
    counter = TalkSpurtCounter(RATE)
    speech = tone(0.5, RATE).tobytes()
    t = feed(counter, speech, 1_000_000_000, [20.0])
    t = feed(counter, bytes(len(speech)), t, [20.0])  # explicit silence: 0.5 s
    t = feed(counter, speech, t, [20.0])
    assert counter.turns == 2
    # A bot that just stops sending for a second, then speaks again.
    feed(counter, speech, t + 1_000_000_000, [20.0])
    assert counter.turns == 3


def test_quiet_audio_is_no_turn() -> None:
    counter = TalkSpurtCounter(RATE)
    feed(counter, tone(1.0, RATE, amp=0.001).tobytes(), 0, [20.0])
    assert counter.turns == 0 and counter.last_voiced_ns == 0
