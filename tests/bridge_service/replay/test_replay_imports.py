"""Replaying runs that were never made through vae: imported calls and NeMo results."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.bridge_service.replay.helpers import (
    agent_script,
    composite_verdicts,
    placed_turns,
    replay,
    sent_stream,
    session_of,
    with_script,
)
from tests.interop.nemo_fixture import PIZZA, build
from tests.recordings.calls_fixture import write_pair, write_sidecars, write_stereo
from vae.bridge_service.server import BridgeServer
from vae.recordings.importers import import_nemo
from vae.recordings.importers.calls import import_calls
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.replay_links import run_source
from vae.recordings.read.replay_script import load_script


def _check_replayed_caller(db: Path, source_sid: str, replay_sid: str) -> None:
    with RecordingReader(db) as reader:
        recorded = load_script(reader, source_sid)
    placed = placed_turns(db, replay_sid)
    assert len(placed) == len(recorded.turns) > 0
    stream = sent_stream(db, replay_sid)
    for turn, p in zip(recorded.turns, placed, strict=True):
        assert np.array_equal(stream[p["start_offset"] : p["end_offset"]], turn.samples)


async def test_imported_calls_replay_against_the_reference_agent(
    bridge: BridgeServer, db_path: Path, tmp_path: Path
) -> None:
    write_stereo(tmp_path / "plain.wav")
    write_pair(tmp_path, "paired")
    write_sidecars(tmp_path, "paired")
    await import_calls(db_path, [tmp_path], run_id="june")
    agent = with_script(agent_script("2026-03-20"))
    again = await replay(bridge, "june", agent=agent, replay_scenarios=("paired",))
    rep_sid = session_of(db_path, again, "paired")
    _check_replayed_caller(db_path, session_of(db_path, "june", "paired"), rep_sid)
    with RecordingReader(db_path) as reader:
        assert run_source(reader, again) == "june"
        session = reader.session(rep_sid)
        assert [s.scenario_name for s in reader.sessions(again)] == ["paired"]
    assert session is not None and session.stop_reason == "end_tool"
    # The replay is an ordinary recording: the live agent's actions are scored.
    assert (await composite_verdicts(db_path, again)) == {"paired": ("passed", [])}


async def test_a_nemo_run_replays_against_the_reference_agent(
    bridge: BridgeServer, db_path: Path, tmp_path: Path
) -> None:
    report = await import_nemo(db_path, build(tmp_path))
    script = [{"say": "Hello, Pizza Place."}, {"say": "Done, goodbye.", "end": True}]
    again = await replay(
        bridge, report.run_id, agent=with_script(script), replay_scenarios=(PIZZA,)
    )
    rep_sid = session_of(db_path, again, PIZZA)
    _check_replayed_caller(db_path, session_of(db_path, report.run_id, PIZZA), rep_sid)
    with RecordingReader(db_path) as reader:
        session = reader.session(rep_sid)
    assert session is not None and session.stop_reason == "end_tool"
    assert (session.user_turns, session.agent_turns) == (1, 2)
