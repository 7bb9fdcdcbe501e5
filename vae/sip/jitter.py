"""The receive jitter buffer: RTP audio placed by timestamp, played out at a fixed delay.

Why by timestamp and not by arrival: packets arrive bursty, late, twice or
out of order, and the far end may use any packet time (10, 20, 30 ms). Each
packet's samples are placed at their RTP timestamp; :meth:`JitterBuffer.pop`
takes the next ``n`` samples of that timeline, ``depth`` samples behind the
first packet heard, so reordering and jitter up to ``depth`` are absorbed and
a lost packet becomes silence of exactly its length. Nothing here drifts: the
consumer pops on its own clock and the timeline advances by what it takes.

- a packet whose samples were already played is *late* and dropped;
- a packet seen twice is a *duplicate* and dropped;
- the buffer never holds more than ``max_ahead`` samples beyond the playout
  point: a sender far ahead of real time (or a timestamp jump, a new
  talkspurt after a long pause) resynchronises the timeline instead of
  growing memory;
- an underrun longer than ``max_ahead`` (the sender stopped, then resumed)
  resynchronises too, so a resumed stream is again ``depth`` behind.

:meth:`reset` starts a new timeline (the sender changed SSRC). Counters say
what happened, for the recording. Pure: no clock, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class JitterStats:
    packets: int = 0
    late: int = 0
    duplicate: int = 0
    #: Samples played as silence because their packet never came (after the first packet).
    lost_samples: int = 0
    resyncs: int = 0


class JitterBuffer:
    def __init__(self, depth: int, max_ahead: int) -> None:
        self.depth = depth
        self.max_ahead = max(max_ahead, depth * 2)
        self.stats = JitterStats()
        self.reset()

    def reset(self) -> None:
        #: Playout point on the extended timestamp line; None until the first packet.
        self._pos: int | None = None
        self._last_ext: int | None = None
        self._chunks: dict[int, np.ndarray] = {}
        self._underrun = 0
        self._playing = False

    def _extend(self, timestamp: int) -> int:
        """The 32-bit timestamp unwrapped next to the last one seen."""
        if self._last_ext is None:
            self._last_ext = timestamp
            return timestamp
        delta = (timestamp - self._last_ext) & 0xFFFFFFFF
        if delta >= 0x80000000:
            delta -= 0x100000000
        ext = self._last_ext + delta
        self._last_ext = max(self._last_ext, ext)
        return ext

    def push(self, timestamp: int, samples: np.ndarray) -> None:
        """Place one packet's decoded samples at its RTP timestamp."""
        self.stats.packets += 1
        ext = self._extend(timestamp)
        if self._pos is None:
            self._pos = ext - self.depth
        if ext + len(samples) <= self._pos:
            self.stats.late += 1
            return
        if ext in self._chunks:
            self.stats.duplicate += 1
            return
        if ext - self._pos > self.max_ahead:
            # Far ahead of the playout point: a jump or a burst; start again from here.
            self.stats.resyncs += 1
            self._chunks.clear()
            self._pos = ext - self.depth
        self._chunks[ext] = samples

    @property
    def buffered(self) -> int:
        """Samples waiting from the playout point to the end of the furthest packet."""
        if self._pos is None or not self._chunks:
            return 0
        return max(k + len(v) for k, v in self._chunks.items()) - self._pos

    def pop(self, n: int) -> np.ndarray:
        """The next ``n`` samples of the timeline (silence where nothing arrived)."""
        out = np.zeros(n, dtype=np.int16)
        if self._pos is None:
            return out
        start, end = self._pos, self._pos + n
        filled = 0
        for key in sorted(self._chunks):
            chunk = self._chunks[key]
            lo, hi = max(key, start), min(key + len(chunk), end)
            if lo < hi:
                out[lo - start : hi - start] = chunk[lo - key : hi - key]
                filled += hi - lo
            if key + len(chunk) <= end:
                del self._chunks[key]
        self._pos = end
        if self._chunks or filled:
            if self._playing:  # the delay before the first packet is no loss
                self.stats.lost_samples += n - filled
            self._playing = self._playing or filled > 0
            self._underrun = 0
        else:
            self._underrun += n
            if self._underrun > self.max_ahead:
                # The sender paused: its next packet starts a new timeline at the same delay.
                self._underrun = 0
                self._pos = None
                self._last_ext = None
                self.stats.resyncs += 1
        return out
