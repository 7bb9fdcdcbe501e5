"""Tone or silence over spans of int16 samples: what a redacted recording sounds like.

Why a tone (or silence) and never noise: a listener — and the scorer's timing
metrics — must tell a masked span from speech. A tone at a fixed level is
heard as "removed here" and never detected as a word; silence keeps the
voice-activity timing of the rest intact. The recording keeps its length:
only samples inside the spans change. Short raised-cosine edges (5 ms) keep
the cut from clicking.
"""

from __future__ import annotations

import numpy as np

EDGE_S = 0.005


def mask(
    samples: np.ndarray,
    rate: int,
    spans: list[tuple[int, int]],
    kind: str = "tone",
    tone_hz: float = 1000.0,
    level_dbfs: float = -18.0,
) -> np.ndarray:
    """A copy of ``samples`` with each ``[start, end)`` span replaced."""
    out = np.array(samples, dtype=np.int16, copy=True)
    amplitude = 32767.0 * 10 ** (level_dbfs / 20.0)
    edge = max(1, int(EDGE_S * rate))
    for start, end in spans:
        a, b = max(0, int(start)), min(len(out), int(end))
        if b <= a:
            continue
        if kind == "silence":
            out[a:b] = 0
            continue
        t = np.arange(a, b) / rate
        tone = amplitude * np.sin(2 * np.pi * tone_hz * t)
        n = b - a
        ramp = min(edge, n // 2)
        if ramp:
            window = 0.5 - 0.5 * np.cos(np.pi * np.arange(ramp) / ramp)
            tone[:ramp] *= window
            tone[n - ramp :] *= window[::-1]
        out[a:b] = np.round(tone).astype(np.int16)
    return out
