"""Talk spurts in a recorded channel: a small energy detector shared by replay and import.

Why here and not in the scorer's timing package: the store layer needs it
itself — ``vae import calls`` finds turns in a recording that carries nothing
else, and a replay cuts the recorded caller into turns — and the store must
not import a service.

A 10 ms frame is voiced when its RMS is above ``threshold_dbfs``; voiced runs
shorter than ``min_speech_s`` are ignored (clicks); runs closer than
``merge_gap_s`` are one spurt. Boundaries are then made sample-exact: a spurt
starts at its first sample whose magnitude reaches the threshold level and
ends after its last one, searched one frame beyond the voiced frames. So a
spurt cut out and played again between silences is found again at exactly the
same samples, however the frames fall.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class VadSettings:
    threshold_dbfs: float = -45.0
    min_speech_s: float = 0.06
    merge_gap_s: float = 0.5
    frame_s: float = 0.01


@dataclass(frozen=True)
class Spurt:
    """Samples ``[start, end)`` of a channel."""

    start: int
    end: int


def spurts(samples: np.ndarray, rate: int, settings: VadSettings | None = None) -> list[Spurt]:
    """The talk spurts of ``samples`` (int16 mono at ``rate``), in order."""
    s = settings or VadSettings()
    frame = max(1, round(s.frame_s * rate))
    n_frames = len(samples) // frame
    if n_frames == 0:
        return []
    x = samples[: n_frames * frame].astype(np.float64).reshape(n_frames, frame)
    level = 10 ** (s.threshold_dbfs / 20) * 32768
    voiced = np.sqrt(np.mean(x * x, axis=1)) > level
    runs = _runs(voiced)
    min_frames = max(1, round(s.min_speech_s * rate / frame))
    runs = [(a, b) for a, b in runs if b - a >= min_frames]
    merged: list[tuple[int, int]] = []
    gap = round(s.merge_gap_s * rate / frame)
    for a, b in runs:
        if merged and a - merged[-1][1] < gap:
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    loud = np.abs(samples.astype(np.int32)) >= level
    out: list[Spurt] = []
    for a, b in merged:
        lo = max(0, (a - 1) * frame)
        hi = min(len(samples), (b + 1) * frame)
        idx = np.flatnonzero(loud[lo:hi])
        if len(idx) == 0:  # voiced by RMS but no single loud sample: keep the frames
            out.append(Spurt(a * frame, b * frame))
        else:
            out.append(Spurt(lo + int(idx[0]), lo + int(idx[-1]) + 1))
    return out


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """``[start, end)`` index pairs of the True runs of a boolean array."""
    if not len(flags):
        return []
    padded = np.concatenate([[False], flags, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return [(int(edges[i]), int(edges[i + 1])) for i in range(0, len(edges), 2)]
