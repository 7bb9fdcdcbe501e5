"""Pairing: waiting streams time out and are released; leavers are forgotten; connectors."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import scenario, start_run, watch
from tests.helpers import wait_until
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.runs.model import run_view
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.read.reader import RecordingReader

USER, AGENT = common_pb2.ROLE_USER, common_pb2.ROLE_AGENT


async def _assert_fresh_pair_converses(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    """A new run pairs two new bots (not a stale stream) and ends cleanly."""

    async def talk(bot: TestBot) -> None:
        await bot.speak(tone(0.2, 16000))
        if bot.role == AGENT:
            await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)

    run_id = await start_run(stub, [scenario()])
    u, a = TestBot(bridge.address, USER, talk), TestBot(bridge.address, AGENT, talk)
    await asyncio.gather(u.run(), a.run(), watch(stub, run_id))
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
    assert s.user_bot["name"] == "testbot" and s.stop_reason == "end_tool"


async def test_wait_timeout(make_bridge: Any) -> None:
    server = await make_bridge(settings={"wait_timeout_s": 0.3})
    got = await asyncio.wait_for(TestBot(server.address, USER).run(), 10)
    assert got.joined.wait_timeout_ms == 300
    assert got.wait_timeout is not None and got.wait_timeout.waited_ms == 300
    assert got.start is None and got.status == got.status.OK
    assert server.pool.waiting() == 0


async def test_leaver_is_forgotten(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    leaver = TestBot(bridge.address, USER, name="leaver")
    task = asyncio.create_task(leaver.run())
    await wait_until(lambda: bridge.pool.waiting() == 1, 5)
    await leaver.hang_up_stream()
    await task
    await wait_until(lambda: bridge.pool.waiting() == 0, 5)

    await _assert_fresh_pair_converses(bridge, stub)


async def test_pairing_timeout_is_recorded(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id = await start_run(stub, [scenario()], pairing_timeout_s=0.3, max_auto_retries=0)
    events = await watch(stub, run_id)
    assert events[-1].status == bridge_pb2.RUN_STATUS_FAILED
    # No bot joined: no scenario is done, live or read back from the store.
    assert events[-1].scenarios_done == 0
    got = await stub.GetRun(bridge_pb2.GetRunRequest(run_id=run_id))
    assert (got.run.scenarios_done, got.run.scenarios_total) == (0, 1)
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        record = reader.get_run(run_id)
        assert record is not None and run_view(reader, record, None).scenarios_done == 0
    assert s.stop_reason == "peer_never_joined"
    assert s.stop_detail == "no user and agent bot joined within 0.3 s"


async def test_fake_connector_side(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    options = bridge_pb2.RunOptions(
        user_connector=bridge_pb2.ConnectorConfig(
            kind="fake", options_json=json.dumps({"speak_s": 0.4, "rate": 8000})
        )
    )
    response = await stub.StartRun(
        bridge_pb2.StartRunRequest(
            sources=[bridge_pb2.ScenarioSource(inline=json.dumps(scenario()))], options=options
        )
    )
    run_id = response.run.run_id

    async def agent(bot: TestBot) -> None:
        await bot.speak(tone(0.6, 16000))
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)

    a = TestBot(bridge.address, AGENT, agent, run_filter=run_id)
    _, events = await asyncio.gather(a.run(), watch(stub, run_id))
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    heard = a.got.pcm()
    assert int((abs(heard.astype(int)) > 1000).sum()) > 0.3 * 16000  # the fake's tone, resampled
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        assert s.user_bot["name"] == "fake" and s.audio["rates"]["user"] == 8000
        fake_state = reader.final_states(s.session_id)["user"].state
        assert fake_state["fake"] is True
        # A connector with only an async send still gets every frame (the clock's outbox).
        assert fake_state["received_frames"] >= 20
    assert json.loads(response.run.options.user_connector.options_json)["rate"] == 8000


async def test_connector_dial_failure_is_recorded(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    options = bridge_pb2.RunOptions(
        max_auto_retries=0,
        agent_connector=bridge_pb2.ConnectorConfig(
            kind="fake",
            url="ws://127.0.0.1:9",
            options_json='{"fail_dial": true}',
            connect_timeout_s=0.5,
        ),
    )
    response = await stub.StartRun(
        bridge_pb2.StartRunRequest(
            sources=[bridge_pb2.ScenarioSource(inline=json.dumps(scenario()))], options=options
        )
    )
    await watch(stub, response.run.run_id)
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(response.run.run_id)
    assert s.stop_reason == "connector_failed" and "ws://127.0.0.1:9" in s.stop_detail


async def test_cancelled_waiting_stream_is_never_paired(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    """A client that cancels its Converse call while waiting is forgotten."""
    fmt = common_pb2.AudioFormat(
        encoding=common_pb2.AUDIO_ENCODING_PCM16LE, sample_rate_hz=16000, channels=1
    )
    call = stub.Converse()
    await call.write(
        bridge_pb2.BotMessage(
            join=bridge_pb2.Join(
                role=USER,
                bot=common_pb2.BotInfo(name="canceller"),
                send_format=fmt,
                receive_format=fmt,
            )
        )
    )
    assert (await call.read()).WhichOneof("message") == "joined"
    await wait_until(lambda: bridge.pool.waiting() == 1, 5)
    call.cancel()
    await wait_until(lambda: bridge.pool.waiting() == 0, 5)

    await _assert_fresh_pair_converses(bridge, stub)
