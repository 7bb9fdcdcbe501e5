"""Replay requests at the gRPC edge: what is refused, with the field named."""

from __future__ import annotations

import json

import grpc
import pytest

from tests.bridge_service.conftest import inline, scenario
from tests.factories import SessionSpec, Turn, write_run
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.recordings.read.reader import RecordingReader


async def _recorded(bridge: BridgeServer) -> None:
    turns = [Turn("agent", 0.2, 1.0, "Hello"), Turn("user", 1.6, 2.4, "Hi")]
    specs = [
        SessionSpec("a", turns=turns),
        SessionSpec("b", turns=turns),
        # Cut off by a Ctrl-C, and never ended: neither may be replayed.
        SessionSpec("cut", turns=turns, stop_reason="cancelled"),
        SessionSpec("open", turns=turns, stop_reason=""),
    ]
    docs = [scenario(n) for n in ("a", "b", "cut", "open", "never")]
    await write_run(bridge.db_path, docs, specs, run_id="src")
    await write_run(bridge.db_path, [scenario("a")], [SessionSpec("a")], run_id="other")
    cut = [SessionSpec("a", turns=turns, stop_reason="connector_failed")]
    await write_run(bridge.db_path, [scenario("a")], cut, run_id="allcut")


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"replay": "nope"}, "nope"),
        (
            {"replay": "src", "replay_scenarios": ["zzz"]},
            "replay_scenarios: run src has no scenario 'zzz'",
        ),
        ({"replay": "src", "replay_scenarios": ["never"]}, "was never recorded"),
        (
            {"replay": "src", "replay_sessions": ["other/a/1"]},
            "replay_sessions: run src has no session",
        ),
        (
            {"replay": "src", "replay_sessions": ["src/cut/1"]},
            "replay_sessions: session 'src/cut/1' was cut off (cancelled)",
        ),
        (
            {"replay": "src", "replay_sessions": ["src/open/1"]},
            "replay_sessions: session 'src/open/1' was still running",
        ),
        (
            {"replay": "src", "replay_scenarios": ["a", "cut"]},
            "replay_scenarios: scenario 'cut': its latest attempt 'src/cut/1' was cut off",
        ),
        (
            {"replay": "allcut"},
            "replay: run allcut has no finished session to replay;"
            " not replayable: a (cut off (connector_failed))",
        ),
        ({"replay": "src", "sources": inline(scenario("x"))}, "sources: a replay reuses"),
        ({"replay": "src", "resume": "src"}, "replay or resume, not both"),
        ({"replay_scenarios": ["a"]}, "only meaningful with replay"),
        (
            {"replay": "src", "options": bridge_pb2.RunOptions(replay_gate_silence_s=30)},
            "replay_gate_silence_s",
        ),
        (
            {
                "replay": "src",
                "options": bridge_pb2.RunOptions(
                    user_connector=bridge_pb2.ConnectorConfig(
                        kind="fake", options_json=json.dumps({})
                    )
                ),
            },
            "user_connector: a replay plays the user side itself",
        ),
    ],
)
async def test_bad_replay_requests_are_refused(
    bridge: BridgeServer, fields: dict[str, object], expected: str
) -> None:
    await _recorded(bridge)
    async with grpc.aio.insecure_channel(bridge.address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.StartRun(bridge_pb2.StartRunRequest(**fields))  # type: ignore[arg-type]
    assert err.value.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND)
    assert expected in (err.value.details() or "")


async def test_a_subset_of_scenarios_becomes_the_new_run(bridge: BridgeServer) -> None:
    await _recorded(bridge)
    async with grpc.aio.insecure_channel(bridge.address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        run = (
            await stub.StartRun(
                bridge_pb2.StartRunRequest(
                    replay="src",
                    replay_scenarios=["b"],
                    run_id="v2",
                    options=bridge_pb2.RunOptions(pairing_timeout_s=0.5, max_auto_retries=0),
                )
            )
        ).run
        assert run.scenarios_total == 1
        await stub.CancelRun(bridge_pb2.CancelRunRequest(run_id="v2"))


async def test_a_whole_run_replay_leaves_out_cut_off_attempts(bridge: BridgeServer) -> None:
    """A cancelled or never-ended source attempt would replay to a "finished" end."""
    await _recorded(bridge)
    async with grpc.aio.insecure_channel(bridge.address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        run = (
            await stub.StartRun(
                bridge_pb2.StartRunRequest(
                    replay="src",
                    run_id="v3",
                    options=bridge_pb2.RunOptions(pairing_timeout_s=0.5, max_auto_retries=0),
                )
            )
        ).run
        await stub.CancelRun(bridge_pb2.CancelRunRequest(run_id="v3"))
    assert run.scenarios_total == 2
    with RecordingReader(bridge.db_path) as reader:
        record = reader.get_run("v3")
    assert record is not None
    assert record.options["replay_sources"] == {"a": "src/a/1", "b": "src/b/1"}
