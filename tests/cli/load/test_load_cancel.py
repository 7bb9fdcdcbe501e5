"""Ctrl-C in the middle of a step: what was recorded stays, and the step is marked partial.

``vae load`` runs step 1, then step 2; once step 2's calls are live the
test sends SIGINT (what Ctrl-C sends). The step's run is cancelled (its
calls end ``cancelled`` and stay in the store), step 1 is untouched, no
later step starts, the JSON still comes out with step 2 ``partial`` and
left out of the knee, and the exit code is 1. About 20 s.
"""

from __future__ import annotations

import os
import signal
import sqlite3
from pathlib import Path

import pytest

from tests.cli.load.runs import finish, live_sessions, runs_like, start_load
from tests.helpers import wait_until


@pytest.mark.timeout(180)
async def test_ctrl_c_mid_step_keeps_what_was_recorded_and_marks_the_step_partial(
    tmp_path: Path,
) -> None:
    db = tmp_path / "load.db"
    load = await start_load(db, "--steps", "1,2,3", "--step-duration", "4s")
    await wait_until(lambda: bool(runs_like(db, "load-%-step2-c2")), 120, "step 2's run",
                     alive=[load])  # fmt: skip
    step2 = runs_like(db, "load-%-step2-c2")[0][0]
    await wait_until(lambda: live_sessions(db, step2) == 2, 30, "step 2's calls", alive=[load])
    os.kill(load.pid, signal.SIGINT)
    code, doc, err = await finish(load, 90)
    assert code == 1, err[-3000:]
    assert "interrupted" in err
    assert doc["interrupted"] is True
    one, two = doc["steps"]  # step 3 never started
    assert (one["partial"], two["partial"]) == (False, True)
    assert two["run_id"] == step2 and two["calls"] == 2
    assert two["stop_reasons"] == {"cancelled": 2}
    assert doc["knee_detail"]["excluded"] == {"2": "partial"}
    runs = dict(runs_like(db, f"{doc['load_id']}-%"))
    assert runs == {one["run_id"]: "completed", step2: "cancelled"}
    with sqlite3.connect(db) as conn:
        kept = conn.execute(
            "SELECT count(*), sum(stop_reason = 'cancelled') FROM sessions WHERE run_id = ?",
            (step2,),
        ).fetchone()
        audio = conn.execute(
            "SELECT count(*) FROM audio_segments a JOIN sessions s USING (session_id)"
            " WHERE s.run_id = ?",
            (step2,),
        ).fetchone()[0]
    assert tuple(kept) == (2, 2) and audio > 0, "the cut calls and their audio stay recorded"
