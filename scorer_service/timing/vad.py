"""Voice-activity detection on one recorded channel.

The detector is a small protocol so a better one (Silero, WebRTC) can be
swapped in by name without touching the metrics; its settings travel with
every timing score. The default is an energy detector: recorded channels hold
each bot's own clean output (no room noise, no echo), so frame RMS against a
fixed dBFS threshold is exact enough and costs microseconds per second of audio.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np

#: A speech span in seconds from the channel's start.
Span = tuple[float, float]


class Detector(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def frame_s(self) -> float: ...

    def settings(self) -> dict[str, Any]: ...

    def detect(self, samples: np.ndarray, sample_rate: int) -> list[Span]: ...


@dataclass(frozen=True)
class EnergyDetector:
    """Speech where a frame's RMS exceeds ``threshold_dbfs``.

    ``min_speech_ms`` drops shorter blips (clicks); gaps are merged later by the
    metrics, per side, so the detector itself keeps no hangover.
    """

    frame_ms: float = 20.0
    threshold_dbfs: float = -45.0
    min_speech_ms: float = 0.0
    #: Place each span's edges on the first/last sample above the level inside
    #: its edge frames (else spans are whole frames).
    refine_edges: bool = True
    name: str = "energy"

    @property
    def frame_s(self) -> float:
        return self.frame_ms / 1000.0

    def settings(self) -> dict[str, Any]:
        return asdict(self)

    def detect(self, samples: np.ndarray, sample_rate: int) -> list[Span]:
        frame = max(1, round(sample_rate * self.frame_ms / 1000.0))
        n = len(samples) // frame
        if n == 0:
            return []
        x = samples[: n * frame].reshape(n, frame).astype(np.float32)
        power = np.einsum("ij,ij->i", x, x) / frame
        level = 10 ** (self.threshold_dbfs / 20.0) * 32768.0
        active = np.concatenate(([False], power > level**2, [False]))
        edges = np.flatnonzero(np.diff(active.astype(np.int8)))
        starts, stops = edges[0::2], edges[1::2]
        min_frames = self.min_speech_ms / self.frame_ms
        spans = []
        for a, b in zip(starts, stops, strict=True):
            if b - a < min_frames:
                continue
            first = a * frame
            if self.refine_edges:
                # The edge frames hold the boundary somewhere inside: find its sample.
                head = np.flatnonzero(np.abs(x[a]) > level)
                tail = np.flatnonzero(np.abs(x[b - 1]) > level)
                start = first + (int(head[0]) if len(head) else 0)
                stop = (b - 1) * frame + (int(tail[-1]) + 1 if len(tail) else frame)
            else:
                start, stop = first, b * frame
            spans.append((float(start) / sample_rate, float(stop) / sample_rate))
        return spans


def _energy(**options: Any) -> Detector:
    return EnergyDetector(**options)


DETECTORS: dict[str, Callable[..., Detector]] = {"energy": _energy}


def make_detector(name: str, options: dict[str, Any]) -> Detector:
    """Build a registered detector; unknown names or options raise ValueError."""
    factory = DETECTORS.get(name or "energy")
    if factory is None:
        raise ValueError(f"unknown voice-activity detector {name!r} ({', '.join(DETECTORS)})")
    try:
        return factory(**{k: v for k, v in options.items() if k != "name"})
    except TypeError as exc:
        raise ValueError(f"bad options for detector {name!r}: {exc}") from exc
