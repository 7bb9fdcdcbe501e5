"""Who speaks first: a silent expected opener ends the session, fast, once."""

from __future__ import annotations

import time

from tests.bridge_service.conftest import scenario, start_run, watch
from tests.helpers import fake_connector
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.read.reader import RecordingReader


async def test_silent_first_speaker_ends_the_session_and_is_not_retried(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    # Both sides only answer: nobody opens. The scenario expects the agent.
    silent_user = fake_connector("fake://u", speak_s=0.0)
    silent_agent = fake_connector("fake://a", speak_s=0.0)
    t0 = time.monotonic()
    run_id = await start_run(
        stub,
        [scenario(first_speaker="agent")],
        max_auto_retries=1,
        auto_retry_backoff_s=0,
        first_speaker_timeout_s=1.0,
        user_connector=silent_user,
        agent_connector=silent_agent,
    )
    events = await watch(stub, run_id)
    assert time.monotonic() - t0 < 8  # bounded: about the timeout, not max_duration (20 s)
    with RecordingReader(bridge.db_path) as r:
        (s,) = r.sessions(run_id)  # not retried
    assert s.stop_reason == "first_speaker_silent"
    assert "agent was expected to speak first" in s.stop_detail
    assert "--first-speaker user" in s.stop_detail
    ended = [e for e in events if e.kind == bridge_pb2.RUN_EVENT_KIND_SESSION_ENDED]
    assert ended[0].session.stop_reason == bridge_pb2.STOP_REASON_FIRST_SPEAKER_SILENT


async def test_run_option_overrides_the_scenario_and_reaches_both_bots(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    # The user opens after 0.3 s: the run says the user speaks first, so no end.
    user = fake_connector("fake://u", speak_s=0.4, delay_s=0.3, end=True)
    agent = fake_connector("fake://a", speak_s=0.0)
    run_id = await start_run(
        stub,
        [scenario(first_speaker="agent")],
        first_speaker=common_pb2.ROLE_USER,
        first_speaker_timeout_s=5.0,
        user_connector=user,
        agent_connector=agent,
    )
    events = await watch(stub, run_id)
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    with RecordingReader(bridge.db_path) as r:
        (s,) = r.sessions(run_id)
        run = r.get_run(run_id)
    assert s.stop_reason == "user_hang_up"
    assert run is not None and run.options["first_speaker"] == "user"
    got = await stub.GetRun(bridge_pb2.GetRunRequest(run_id=run_id))
    assert got.run.options.first_speaker == common_pb2.ROLE_USER
