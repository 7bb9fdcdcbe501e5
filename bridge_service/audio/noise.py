"""Seeded noise for the user->agent direction.

White noise at a level in dBFS and/or noise files (looped, with a gain and a
random start offset). The generator is seeded from the run's seed and the
scenario's name, so a replay of the same run adds exactly the same noise.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import soundfile

from vae.recordings.audio import resample_whole
from vae.recordings.scenarios.model import NoiseConfig


def noise_seed(run_seed: int, scenario_name: str) -> int:
    """A stable per-scenario seed (never Python's randomised ``hash``)."""
    return zlib.crc32(f"{run_seed}:{scenario_name}".encode()) ^ (run_seed & 0xFFFFFFFF)


def load_noise_file(path: str | Path, rate: int) -> np.ndarray:
    """A noise file as float64 mono samples in int16 units at ``rate``."""
    data, file_rate = soundfile.read(str(path), dtype="int16", always_2d=True)
    mono = data.astype(np.float64).mean(axis=1).astype(np.int16)
    return resample_whole(mono, int(file_rate), rate).astype(np.float64)


class NoiseSource:
    """An endless, seeded noise signal at one sample rate."""

    def __init__(self, config: NoiseConfig, rate: int, seed: int) -> None:
        self.config = config
        self._rng = np.random.default_rng(seed)
        self._white_rms = (
            None if config.white_noise_db is None else 10 ** (config.white_noise_db / 20) * 32767
        )
        gain = 10 ** (config.gain_db / 20)
        tracks = [load_noise_file(p, rate) * gain for p in config.noise_files]
        self._track = np.concatenate(tracks) if tracks else np.zeros(0)
        self._pos = (
            int(self._rng.integers(0, len(self._track)))
            if len(self._track) and config.random_offset
            else 0
        )

    def next(self, n: int) -> np.ndarray:
        """The next ``n`` samples of noise (float64, int16 units)."""
        out = np.zeros(n, dtype=np.float64)
        if self._white_rms is not None:
            out += self._rng.normal(0.0, self._white_rms, n)
        if len(self._track):
            idx = (self._pos + np.arange(n)) % len(self._track)
            out += self._track[idx]
            self._pos = int((self._pos + n) % len(self._track))
        return out

    def add_to(self, pcm: bytes) -> bytes:
        """``pcm`` (PCM16 LE) with the next stretch of noise mixed in, clipped."""
        samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
        mixed = samples + self.next(len(samples))
        out: bytes = np.clip(np.round(mixed), -32768, 32767).astype("<i2").tobytes()
        return out
