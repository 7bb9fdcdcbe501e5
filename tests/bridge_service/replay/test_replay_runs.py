"""Replay end to end: record with the reference bots, replay the caller to an agent.

Real parts only: a bridge on 127.0.0.1:0, the scripted reference bots over
gRPC, SQLite, PCM. The replayed run is compared with its source by rescoring
both and reading each scenario's composite verdict from the store.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bridge_service.server import BridgeServer
from recordings.reader import RecordingReader
from recordings.replay_links import run_source, session_sources
from recordings.replay_script import load_script
from tests.bridge_service.replay.helpers import (
    agent_script,
    composite_verdicts,
    conversation,
    placed_turns,
    record,
    replay,
    sent_stream,
    session_of,
    with_script,
)


async def test_unchanged_agent_replays_every_turn_sample_for_sample(
    bridge: BridgeServer, db_path: Path
) -> None:
    source = await record(bridge, [conversation()])
    again = await replay(bridge, source)
    src_sid, rep_sid = session_of(db_path, source, "booking"), session_of(db_path, again, "booking")
    with RecordingReader(db_path) as reader:
        recorded = load_script(reader, src_sid)
        replayed = load_script(reader, rep_sid)
        rep_session = reader.session(rep_sid)
        assert run_source(reader, again) == source
        assert session_sources(reader, again) == {rep_sid: src_sid}
    assert rep_session is not None
    # The agent's end tool closes both the recording and the replay.
    assert rep_session.stop_reason == "end_tool", rep_session.stop_detail
    placed = placed_turns(db_path, rep_sid)
    assert [p["turn"] for p in placed] == list(range(len(recorded.turns))) == [0, 1]
    stream = sent_stream(db_path, rep_sid)
    for turn, p in zip(recorded.turns, placed, strict=True):
        got = stream[p["start_offset"] : p["end_offset"]]
        assert np.array_equal(got, turn.samples), f"turn {turn.index} differs"
        assert p["gate"] == str(turn.gate) == "after_agent"
    # Cutting the replay again finds the same turns, to the sample.
    assert [t.gate for t in replayed.turns] == [t.gate for t in recorded.turns]
    for a, b in zip(recorded.turns, replayed.turns, strict=True):
        assert np.array_equal(a.samples, b.samples)
    verdicts = {run: await composite_verdicts(db_path, run) for run in (source, again)}
    assert verdicts[source] == verdicts[again] == {"booking": ("passed", [])}


async def test_changed_agent_shows_a_regression_for_the_right_reason(
    bridge: BridgeServer, db_path: Path
) -> None:
    source = await record(bridge, [conversation()])
    v2 = await replay(bridge, source, agent=with_script(agent_script("2026-03-21")))
    before = await composite_verdicts(db_path, source)
    after = await composite_verdicts(db_path, v2)
    assert before["booking"] == ("passed", [])
    verdict, failed = after["booking"]
    assert verdict == "failed"
    assert set(failed) == {"ACTION_MATCH", "DB_STATE_MATCH"}
