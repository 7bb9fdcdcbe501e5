"""Replay on the virtual clock: a virtual recording replays, on either clock; text cannot.

A run recorded on the virtual clock has a real-time recording's shape, so
everything downstream works on it; here the replay: its caller is played
back turn by turn, sample for sample, to the unchanged agent, on the virtual
clock as well (the replayed caller answers every step), while a replay in
text is refused at StartRun (a replay is recorded audio).
"""

from __future__ import annotations

import grpc
import numpy as np
import pytest

from tests.bridge_service.replay.helpers import (
    conversation,
    placed_turns,
    record,
    replay,
    sent_stream,
    session_of,
)
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.replay_script import load_script

VIRTUAL = common_pb2.CLOCK_KIND_VIRTUAL


async def test_a_virtual_recording_replays_on_the_virtual_clock_sample_for_sample(
    bridge: BridgeServer,
) -> None:
    db = bridge.db_path
    source = await record(bridge, [conversation()], clock=VIRTUAL)
    again = await replay(bridge, source, clock=VIRTUAL)
    src_sid, rep_sid = session_of(db, source, "booking"), session_of(db, again, "booking")
    with RecordingReader(db) as reader:
        recorded = load_script(reader, src_sid)
        session = reader.session(rep_sid)
        assert reader.session_mode(rep_sid).clock == "virtual"
    assert session is not None and session.stop_reason == "end_tool", session
    placed = placed_turns(db, rep_sid)
    assert [p["turn"] for p in placed] == list(range(len(recorded.turns))) == [0, 1]
    stream = sent_stream(db, rep_sid)
    for turn, p in zip(recorded.turns, placed, strict=True):
        assert np.array_equal(stream[p["start_offset"] : p["end_offset"]], turn.samples)


async def test_a_replay_cannot_run_in_text(bridge: BridgeServer) -> None:
    source = await record(bridge, [conversation()], clock=VIRTUAL)
    async with grpc.aio.insecure_channel(bridge.address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        request = bridge_pb2.StartRunRequest(
            replay=source, options=bridge_pb2.RunOptions(modality=common_pb2.MODALITY_TEXT)
        )
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.StartRun(request)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (err.value.details() or "").startswith(
        "options.modality: a replay plays the recorded caller's audio sample for sample"
    )
