"""Judging other bridges dead by their beats, on the watcher's own clock.

- a bridge whose counter stands still past the lease, while the watcher
  keeps reading, is judged dead and its row goes;
- a watcher that was itself paused past the lease (a stalled event loop)
  does not take a bridge that kept beating for dead when it resumes: it did
  not watch meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from vae.bridge_service.identity import BridgeIdentity
from vae.bridge_service.shared.presence import Presence
from vae.recordings.write.writer import open_writer

LEASE_S = 0.3


async def test_a_silent_bridge_is_judged_dead_but_a_paused_watcher_judges_nobody(
    tmp_path: Path,
) -> None:
    async with open_writer(tmp_path / "vae.db") as writer:
        me = BridgeIdentity.of_this_process()
        watcher = Presence(writer, me, beat_s=0.02, lease_s=LEASE_S)
        other = Presence(writer, me, beat_s=0.02, lease_s=LEASE_S)
        await other.beat_once()
        await watcher.beat_once()
        assert watcher.alive(other.bridge_id)

        await asyncio.sleep(LEASE_S * 2)  # the watcher stalls; the other beats once after
        await other.beat_once()
        beat = await watcher.beat_once()
        assert other.bridge_id in beat.beats, "a paused watcher deleted a live bridge"
        assert watcher.alive(other.bridge_id) and not watcher.judged_dead

        # Now the other goes silent while the watcher keeps beating.
        give_up = time.monotonic() + 10 * LEASE_S
        while watcher.alive(other.bridge_id):
            assert time.monotonic() < give_up, "a silent bridge was never judged dead"
            await watcher.beat_once()
            await asyncio.sleep(watcher.beat_s)  # the beat's pace, as SharedRuns beats
        beat = await watcher.beat_once()
        assert other.bridge_id not in beat.beats
        assert watcher.judged_dead[other.bridge_id] > LEASE_S
