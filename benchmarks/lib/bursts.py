"""Tone bursts with known onsets, and their detection: how benchmarks/connectors.py times audio.

Every bot of the benchmark speaks the same pattern — a 100 ms tone burst
every 500 ms, silence between — and notes when each burst's first sample
left it (``emit``) and when a burst it hears began arriving (``heard``). An
energy onset survives every transport measured, Opus included, where marked
sample values would not. Only numpy: the pipecat bot imports this from its
own venv.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

PERIOD_S = 0.5
BURST_S = 0.1


def pattern(rate: int, seconds: float) -> np.ndarray:
    """``seconds`` of the burst pattern at ``rate``, int16 mono."""
    t = np.arange(int(rate * seconds)) / rate
    tone = np.sin(2 * np.pi * 1000 * t) * 8000
    on = (t % PERIOD_S) < BURST_S
    return (tone * on).astype("<i2")


def burst_starts(rate: int, seconds: float) -> list[int]:
    """Sample offsets at which the bursts of :func:`pattern` begin."""
    return [int(k * PERIOD_S * rate) for k in range(int(seconds / PERIOD_S + 0.999))]


def onsets(samples: np.ndarray, rate: int, threshold: float = 2000.0) -> list[int]:
    """Sample offsets where a burst starts: loud 5 ms windows after at least 200 ms of quiet."""
    step = max(1, rate // 200)
    n = len(samples) // step
    if n == 0:
        return []
    windows = samples[: n * step].astype(np.float64).reshape(n, step)
    loud = np.sqrt((windows**2).mean(axis=1)) > threshold
    found, quiet = [], 40
    for i, flag in enumerate(loud):
        if flag and quiet >= 40:
            found.append(i * step)
        quiet = 0 if flag else quiet + 1
    return found


class Detector:
    """Streaming onset detection on received frames, timestamped on arrival."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.quiet_s = 1.0

    def frame(self, pcm: bytes, rate: int, channels: int = 1) -> None:
        samples = np.frombuffer(pcm, "<i2").reshape(-1, channels)[:, 0]
        if not len(samples):
            return
        loud = int(np.abs(samples.astype(np.int32)).max()) > 2000
        if loud and self.quiet_s >= 0.2:
            note(self.log, "heard")
        self.quiet_s = 0.0 if loud else self.quiet_s + len(samples) / rate


def note(log: Path, what: str, ns: int | None = None) -> None:
    with log.open("a") as f:
        f.write(json.dumps({what: ns or time.time_ns()}) + "\n")


def read(log: Path) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {"emit": [], "heard": []}
    if log.exists():
        for line in log.read_text().splitlines():
            for key, value in json.loads(line).items():
                out[key].append(int(value))
    return out
