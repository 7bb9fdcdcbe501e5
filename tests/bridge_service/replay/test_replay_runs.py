"""Replay end to end: record with the reference bots, replay the caller to an agent.

Real parts only: a bridge on 127.0.0.1:0, the scripted reference bots over
gRPC, SQLite, PCM. The replayed run is compared with its source by rescoring
both and reading each scenario's composite verdict from the store.
"""

from __future__ import annotations

import asyncio
from itertools import pairwise
from pathlib import Path

import numpy as np

from tests.bridge_service.replay.helpers import (
    agent_script,
    composite_verdicts,
    conversation,
    placed_turns,
    record,
    replay,
    resume,
    sent_stream,
    session_of,
    with_script,
)
from vae.bridge_service.server import BridgeServer
from vae.recordings.models import EventKind, Side
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.replay_links import run_source, session_sources
from vae.recordings.read.replay_script import load_script
from vae.scorer_service.compare.runs import compare_runs
from vae.scorer_service.report import render_html, report_data


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
    # The caller's transcripts are carried over, at the turns' new places.
    with RecordingReader(db_path) as reader:
        said = [
            e.payload for e in reader.events(rep_sid, [EventKind.TRANSCRIPT]) if e.side is Side.USER
        ]
    assert [p["text"] for p in said] == [t.transcripts[0]["text"] for t in recorded.turns]
    assert [p["start_sample_offset"] for p in said] == [p["start_offset"] for p in placed]
    assert all(p["replayed_from"]["session_id"] == src_sid for p in said)
    # Cutting the replay again finds the same turns, to the sample.
    assert [t.gate for t in replayed.turns] == [t.gate for t in recorded.turns]
    for a, b in zip(recorded.turns, replayed.turns, strict=True):
        assert np.array_equal(a.samples, b.samples)
    verdicts = {run: await composite_verdicts(db_path, run) for run in (source, again)}
    assert verdicts[source] == verdicts[again] == {"booking": ("passed", [])}
    with RecordingReader(db_path) as reader:
        data = report_data(reader, again, include_audio=False)
        html = render_html(reader, again)
    assert data["run"]["replayed_from"] == source
    assert f"<td>replayed from</td><td>{source}</td>" in html


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
    # `vae compare SOURCE REPLAY`'s library call: a regression, for those reasons.
    cmp = await asyncio.to_thread(compare_runs, db_path, source, v2)
    (row,) = [c for c in cmp.scenarios if c.scenario == "booking"]
    assert row.change == "regression"
    assert {r.split(":")[0] for r in row.reasons} == {"ACTION_MATCH", "DB_STATE_MATCH"}


def barge_in_call() -> dict:  # type: ignore[type-arg]
    doc = conversation("barge")
    doc["user"]["script"] = [
        {"say": "Hi, a change please."},
        {"say": "Sorry, just move it to March twenty.", "barge_in_after_s": 1.0},
        {"say": "Thanks, bye."},
    ]
    doc["agent"]["yield_after_s"] = 0.3
    doc["agent"]["script"] = [
        {"say": "Hello, how can I help?"},
        {"say": "Of course. Let me first explain our long policy on changes and fees today."},
        *agent_script("2026-03-20")[1:],
    ]
    return doc


async def test_barge_in_happens_again_at_the_same_offset(
    bridge: BridgeServer, db_path: Path
) -> None:
    source = await record(bridge, [barge_in_call()])
    again = await replay(bridge, source)
    with RecordingReader(db_path) as reader:
        recorded = load_script(reader, session_of(db_path, source, "barge"))
        replayed = load_script(reader, session_of(db_path, again, "barge"))
    gates = [str(t.gate) for t in recorded.turns]
    assert gates == ["after_agent", "barge_in", "after_agent"]
    placed = placed_turns(db_path, session_of(db_path, again, "barge"))
    barge = placed[1]
    assert barge["gate"] == "barge_in"
    # Placed at the recorded offset into the new agent's turn, to the sample.
    assert abs(barge["delay_s"] - barge["recorded_delay_s"]) <= 1 / recorded.rate
    # And the replay's own recording shows the interruption again, where it was.
    assert [str(t.gate) for t in replayed.turns] == gates
    assert abs(replayed.turns[1].delay_s - recorded.turns[1].delay_s) < 0.005
    for a, b in zip(recorded.turns, replayed.turns, strict=True):
        assert np.array_equal(a.samples, b.samples)


async def test_a_slower_agent_is_waited_for(bridge: BridgeServer, db_path: Path) -> None:
    source = await record(bridge, [conversation()])
    slow = await replay(
        bridge, source, agent=with_script(agent_script("2026-03-20"), response_delay_s=1.5)
    )
    rep_sid = session_of(db_path, slow, "booking")
    with RecordingReader(db_path) as reader:
        recorded = load_script(reader, session_of(db_path, source, "booking"))
        replayed = load_script(reader, rep_sid)
    placed = placed_turns(db_path, rep_sid)
    assert len(placed) == len(recorded.turns) == len(replayed.turns)
    for rec, rep, p in zip(recorded.turns, replayed.turns, placed, strict=True):
        # No overlap that was not in the recording: each turn still follows the agent.
        assert str(rep.gate) == str(rec.gate) == "after_agent"
        assert p["delay_s"] >= rec.delay_s - 1 / recorded.rate
        assert np.array_equal(rep.samples, rec.samples)
    # The agent took longer, so the caller's turns moved later on the line.
    assert replayed.turns[0].source_start_s > recorded.turns[0].source_start_s + 1.0


async def test_two_replays_give_the_same_caller(bridge: BridgeServer, db_path: Path) -> None:
    source = await record(bridge, [conversation()])
    first = await replay(bridge, source)
    second = await replay(bridge, source)
    one, two = (placed_turns(db_path, session_of(db_path, r, "booking")) for r in (first, second))
    # Both replays placed every recorded turn, so the comparisons below compare something.
    assert [p["turn"] for p in one] == [p["turn"] for p in two] == [0, 1]
    # The same turns, with the same cues, each placed the same number of samples after
    # its cue (the agent's end of speech on the delivered line): the caller moves only
    # as much as the agent did, never with the wall clock.
    assert [(p["turn"], p["gate"], p["samples"]) for p in one] == [
        (p["turn"], p["gate"], p["samples"]) for p in two
    ]
    after_cue = [[p["start_offset"] - p["cue_offset"] for p in run] for run in (one, two)]
    assert after_cue[0] == after_cue[1]
    streams = [sent_stream(db_path, session_of(db_path, r, "booking")) for r in (first, second)]
    for a, b in zip(one, two, strict=True):
        x = streams[0][a["start_offset"] : a["end_offset"]]
        y = streams[1][b["start_offset"] : b["end_offset"]]
        assert np.array_equal(x, y)
    # Between turns the caller sends exact silence, in both replays.
    for stream, run in zip(streams, (one, two), strict=True):
        gaps = [stream[p["end_offset"] : q["start_offset"]] for p, q in pairwise(run)]
        assert not any(g.any() for g in gaps)


async def test_the_replay_ends_after_the_last_turn_and_the_agents_reply(
    bridge: BridgeServer, db_path: Path
) -> None:
    source = await record(bridge, [conversation()])
    never_ends = [dict(item, end=False) for item in agent_script("2026-03-20")]
    again = await replay(
        bridge,
        source,
        agent=with_script(never_ends),
        end_policy=2,  # valid-terminal-state
    )
    rep_sid = session_of(db_path, again, "booking")
    with RecordingReader(db_path) as reader:
        session = reader.session(rep_sid)
        ended = [e for e in reader.events(rep_sid, [EventKind.END_CONVERSATION])]
    assert session is not None
    assert session.stop_reason == "replay_finished" and session.clean_exit is True
    assert [(e.side, e.payload["kind"]) for e in ended] == [(Side.USER, "replay_finished")]
    # All recorded turns were played, and the agent answered the last one.
    assert len(placed_turns(db_path, rep_sid)) == 2 and session.agent_turns == 3


async def test_a_replay_resumes_with_the_same_source_sessions(
    bridge: BridgeServer, db_path: Path
) -> None:
    source = await record(bridge, [conversation()])
    # No agent ever joins: the attempt fails unpaired, the run fails.
    failed = await replay(bridge, source, agent=None, pairing_timeout_s=1)
    with RecordingReader(db_path) as reader:
        first = reader.sessions(failed)
    assert [s.stop_reason for s in first] == ["peer_never_joined"]
    await resume(bridge, failed)
    rep_sid = session_of(db_path, failed, "booking")
    with RecordingReader(db_path) as reader:
        assert reader.session(rep_sid).stop_reason == "end_tool"  # type: ignore[union-attr]
        assert session_sources(reader, failed) == {rep_sid: session_of(db_path, source, "booking")}
    assert len(placed_turns(db_path, rep_sid)) == 2
