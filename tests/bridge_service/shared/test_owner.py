"""The owner's follow loop when this bridge's beats stopped for good.

A bridge whose beat task failed (a bug, the store) never learns again what
became of its queued attempts — other bridges delete the jobs of an owner
that stopped beating — so the owner must not wait on: the attempt raises
the failure, and the run fails naming it, instead of hanging forever.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.bridge_service.conftest import scenario
from vae.bridge_service.config import BridgeSettings, RunSettings
from vae.bridge_service.identity import BridgeIdentity
from vae.bridge_service.runs.dispatch import LiveSession
from vae.bridge_service.runs.model import RunState
from vae.bridge_service.session.plan import SessionPlan
from vae.bridge_service.shared.owner import Owner
from vae.bridge_service.shared.presence import Presence
from vae.recordings.read.reader import RecordingReader
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.recordings.write.writer import open_writer


async def test_an_owner_whose_beats_stopped_stops_waiting_with_the_failure(
    tmp_path: Path,
) -> None:
    db = tmp_path / "vae.db"
    async with open_writer(db) as writer:
        presence = Presence(writer, BridgeIdentity.of_this_process(), beat_s=0.05)
        await presence.beat_once()
        owner = Owner(writer, db, presence, asyncio.Event())
        settings = RunSettings(pairing_timeout_s=60.0)
        frozen = scenario_from_dict(scenario(), "test")
        run = RunState("r1", settings, [frozen], time.time_ns(), "test", 1)
        plan = SessionPlan("r1", "r1_s1_a1", frozen, 1, settings, BridgeSettings())
        live: dict[str, LiveSession] = {}
        follow = asyncio.create_task(owner.run_queued(run, plan, live))
        await presence.beat_once()  # the owner reads its job, queued, and waits
        assert "r1_s1_a1" in live and not follow.done()
        presence.stopped(RuntimeError("the beat task broke"))
        with pytest.raises(RuntimeError, match="the beat task broke"):
            await asyncio.wait_for(follow, 5)
        assert not live
    with RecordingReader(db) as reader:  # the job was taken back, not left for others
        count = reader.conn.execute("SELECT COUNT(*) FROM session_jobs").fetchone()[0]
    assert count == 0
