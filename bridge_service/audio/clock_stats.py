"""How late a session's clock ticked and how late its audio arrived, in bounded memory.

A stall of the event loop (a large payload parsed on it, a writer waiting on
disk) delays every session's ticks; recording each session's tick lateness
(p50/p99/max) and the largest gap in each bot's audio arrivals with the
session makes such a stall visible in the data, not only in a benchmark.

Lateness goes into a fixed histogram (0.1 ms bins up to 10 ms, 1 ms bins up to
1 s, one overflow bin), so memory stays constant whatever the session's
length; percentiles are reported as the upper edge of their bin, the maximum
exactly.
"""

from __future__ import annotations

_FINE_US = 100  # bin width below 10 ms
_FINE_BINS = 100
_COARSE_US = 1000  # bin width from 10 ms to 1 s
_COARSE_BINS = 990


class LatenessHistogram:
    __slots__ = ("_bins", "count", "max_ns")

    def __init__(self) -> None:
        self._bins = [0] * (_FINE_BINS + _COARSE_BINS + 1)
        self.count = 0
        self.max_ns = 0

    def add(self, late_ns: int) -> None:
        late_ns = max(0, late_ns)
        us = late_ns // 1000
        if us < _FINE_BINS * _FINE_US:
            i = us // _FINE_US
        else:
            i = min(_FINE_BINS + (us - _FINE_BINS * _FINE_US) // _COARSE_US, len(self._bins) - 1)
        self._bins[i] += 1
        self.count += 1
        if late_ns > self.max_ns:
            self.max_ns = late_ns

    def percentile_ms(self, q: float) -> float:
        """Upper edge of the bin holding the q-th percentile (0 when empty)."""
        if not self.count:
            return 0.0
        rank = max(1, -(-int(q * self.count) // 100)) if q < 100 else self.count
        seen = 0
        for i, n in enumerate(self._bins):
            seen += n
            if seen >= rank:
                return min(_upper_ms(i), self.max_ns / 1e6)
        return self.max_ns / 1e6  # pragma: no cover - rank <= count

    def summary(self) -> dict[str, float | int]:
        return {
            "ticks": self.count,
            "p50_ms": round(self.percentile_ms(50), 3),
            "p99_ms": round(self.percentile_ms(99), 3),
            "max_ms": round(self.max_ns / 1e6, 3),
        }


def _upper_ms(i: int) -> float:
    if i < _FINE_BINS:
        return (i + 1) * _FINE_US / 1000
    return (_FINE_BINS * _FINE_US + (i - _FINE_BINS + 1) * _COARSE_US) / 1000


class ArrivalGaps:
    """Largest delay of a bot's audio beyond what the previous chunk's length explains.

    A bot sending in real time delivers chunk i+1 about one chunk length after
    chunk i; anything beyond that (the chunk waited somewhere: the network, the
    bot, or the bridge's loop) is the gap recorded here.
    """

    __slots__ = ("_due_ns", "chunks", "max_ns")

    def __init__(self) -> None:
        self._due_ns = 0
        self.max_ns = 0
        self.chunks = 0

    def add(self, arrival_ns: int, samples: int, rate: int) -> None:
        if self.chunks:
            gap = arrival_ns - self._due_ns
            if gap > self.max_ns:
                self.max_ns = gap
        self.chunks += 1
        self._due_ns = arrival_ns + samples * 1_000_000_000 // rate
