"""Which bridges sharing the store are alive: heartbeats judged on one's own clock.

Why beats and not a lock held by a connection: a bridge's claim must be
released when the bridge dies *or* when it is cut off (a machine that froze,
a network partition) — a lock held by a connection lasts as long as the
server believes the connection alive (TCP timeouts, minutes), and session
locks tie the queue to one database's features. Each bridge instead adds one
to its own counter in ``bridge_beats`` every ``beat_s``, in the same short
transaction that reads what it needs (its jobs' states, the end requests for
sessions it serves). A watcher notes when each other bridge's counter last
*changed*, on the watcher's monotonic clock, so machines' clocks need not
agree; a counter unchanged for ``lease_s`` (or a row removed by a clean
stop) means that bridge is gone, and its row is deleted. "Unchanged for"
is measured up to this bridge's latest *reading* of the table, not up to
now: a watcher that was itself paused (a stalled event loop, a frozen
process) has not watched meanwhile, and must not take every other bridge
for dead the moment it resumes.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time

from vae.bridge_service.identity import BridgeIdentity
from vae.recordings.write import session_jobs
from vae.recordings.write.session_jobs import Beat, JobView
from vae.recordings.write.writer import RecordingWriter

#: How often a bridge beats, and how long a silent bridge is still taken for alive.
BEAT_S = 0.25
LEASE_S = 5.0


class Presence:
    def __init__(
        self,
        writer: RecordingWriter,
        identity: BridgeIdentity,
        *,
        beat_s: float = BEAT_S,
        lease_s: float = LEASE_S,
    ) -> None:
        self.writer = writer
        self.identity = identity
        self.beat_s = beat_s
        self.lease_s = lease_s
        #: Unique per process run: a restarted bridge on the same pid is another bridge.
        self.bridge_id = f"{identity.host}:{identity.pid}:{secrets.token_hex(4)}"
        self._seen: dict[str, tuple[int, float]] = {}
        #: When the beats were last read (monotonic): the end of what this bridge watched.
        self._read_at = 0.0
        #: Bridges this one judged dead -> how long their beat had stood still.
        self.judged_dead: dict[str, float] = {}
        #: This bridge's jobs as owner, as of the last beat.
        self.owned: dict[str, JobView] = {}
        #: Jobs waiting for a bridge, as of the last beat.
        self.queued = 0
        #: Beats begun, and the number of the beat ``owned`` comes from.
        self.begun = 0
        self.current = 0
        #: Why the beats stopped before the bridge did (a follower must not wait on).
        self.failure: BaseException | None = None
        self._beaten = asyncio.Event()

    def alive(self, bridge_id: str) -> bool:
        if bridge_id == self.bridge_id:
            return True
        seen = self._seen.get(bridge_id)
        return seen is not None and self._read_at - seen[1] <= self.lease_s

    def silent_for(self, bridge_id: str) -> float:
        """Seconds since ``bridge_id``'s beat last moved (inf: it left cleanly)."""
        seen = self._seen.get(bridge_id)
        if seen is None:
            return self.judged_dead.get(bridge_id, float("inf"))
        return self._read_at - seen[1]

    async def beat_once(self) -> Beat:
        """Beat, forget the dead, and learn this bridge's jobs and end requests."""
        self.begun += 1
        number = self.begun
        dead = [b for b in self._seen if b != self.bridge_id and not self.alive(b)]
        for bridge_id in dead:
            self.judged_dead[bridge_id] = self.silent_for(bridge_id)
        beat = await session_jobs.beat(self.writer, self.bridge_id, self.identity.to_dict(), dead)
        now = self._read_at = time.monotonic()
        for bridge_id, count in beat.beats.items():
            seen = self._seen.get(bridge_id)
            if seen is None or seen[0] != count:
                self._seen[bridge_id] = (count, now)
        for gone in [b for b in self._seen if b not in beat.beats]:
            del self._seen[gone]
        self.owned, self.queued, self.current = beat.owned, beat.queued, number
        beaten, self._beaten = self._beaten, asyncio.Event()
        beaten.set()
        return beat

    def stopped(self, failure: BaseException) -> None:
        """The beats stopped for good: wake every waiter, which reads ``failure``."""
        self.failure = failure
        self._beaten.set()

    async def next_beat(self, timeout_s: float) -> None:
        """Wait for the next beat to be read (at most ``timeout_s``)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._beaten.wait(), timeout_s)

    async def leave(self) -> None:
        await session_jobs.leave(self.writer, self.bridge_id)
