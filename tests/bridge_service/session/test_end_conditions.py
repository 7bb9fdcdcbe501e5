"""Every end condition gives its stop reason; the end policy decides clean exit."""

from __future__ import annotations

import asyncio

import pytest

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import run_pair, scenario, start_run
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.read.reader import RecordingReader

TOOL_ONLY = bridge_pb2.END_POLICY_TOOL_ONLY
VALID = bridge_pb2.END_POLICY_VALID_TERMINAL_STATE


async def quiet(bot: TestBot) -> None:
    """A bot that never speaks."""


async def speak(bot: TestBot) -> None:
    await bot.speak(tone(0.3, bot.send_rate))


async def hang_up(bot: TestBot) -> None:
    await bot.speak(tone(0.3, bot.send_rate))
    await bot.end(common_pb2.END_KIND_USER_HANG_UP, "bye")


async def end_tool(bot: TestBot) -> None:
    await bot.speak(tone(0.3, bot.send_rate))
    await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)


async def talk_forever(bot: TestBot) -> None:
    while not bot.ending.is_set():
        await bot.speak(tone(1.0, bot.send_rate))


def session_of(bridge: BridgeServer, run_id: str) -> object:
    with RecordingReader(bridge.db_path) as reader:
        (session,) = reader.sessions(run_id)
        return session


@pytest.mark.parametrize(
    ("user", "agent", "policy", "reason", "clean"),
    [
        (speak, end_tool, TOOL_ONLY, "end_tool", True),
        (hang_up, speak, TOOL_ONLY, "user_hang_up", False),
        (hang_up, speak, VALID, "user_hang_up", True),
    ],
    ids=["end-tool", "hang-up-tool-only", "hang-up-valid-terminal"],
)
async def test_bot_ends(
    bridge: BridgeServer,
    stub: bridge_pb2_grpc.BridgeServiceStub,
    user: object,
    agent: object,
    policy: int,
    reason: str,
    clean: bool,
) -> None:
    got_u, got_a, _, run_id = await run_pair(bridge, stub, user, agent, end_policy=policy)
    s = session_of(bridge, run_id)
    assert (s.stop_reason, s.clean_exit) == (reason, clean)  # type: ignore[attr-defined]
    assert got_u.ended.clean_exit is clean and got_a.ended.clean_exit is clean
    assert got_u.status == got_a.status == got_u.status.OK


async def user_speaks_last(bot: TestBot) -> None:
    await bot.speak(tone(0.3, bot.send_rate))


async def agent_first(bot: TestBot) -> None:
    await bot.speak(tone(0.2, bot.send_rate))


@pytest.mark.parametrize(
    ("user", "agent", "policy", "clean"),
    [
        (quiet, quiet, VALID, False),
        (user_speaks_last, quiet, VALID, True),
        (user_speaks_last, quiet, TOOL_ONLY, False),
    ],
    ids=["silent", "user-last-valid", "user-last-tool-only"],
)
async def test_inactivity_timeout(
    bridge: BridgeServer,
    stub: bridge_pb2_grpc.BridgeServiceStub,
    user: object,
    agent: object,
    policy: int,
    clean: bool,
) -> None:
    _, got_a, _, run_id = await run_pair(
        bridge, stub, user, agent, end_policy=policy, inactivity_timeout_s=0.8
    )
    s = session_of(bridge, run_id)
    assert s.stop_reason == "inactivity_timeout"  # type: ignore[attr-defined]
    assert s.clean_exit is clean  # type: ignore[attr-defined]
    assert got_a.ending.reason == bridge_pb2.STOP_REASON_INACTIVITY_TIMEOUT


async def test_max_duration(bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub) -> None:
    got_u, _, _, run_id = await run_pair(
        bridge, stub, talk_forever, talk_forever, max_duration_s=1.0
    )
    s = session_of(bridge, run_id)
    assert s.stop_reason == "max_duration" and s.clean_exit is False  # type: ignore[attr-defined]
    assert 0.9 < s.duration_s < 5  # type: ignore[attr-defined]
    assert got_u.start.max_duration_ms == 1000


async def test_bot_disconnect(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    async def vanish(bot: TestBot) -> None:
        await bot.speak(tone(0.2, bot.send_rate))
        await bot.hang_up_stream()

    _, got_a, events, run_id = await run_pair(bridge, stub, vanish, talk_forever)
    s = session_of(bridge, run_id)
    assert s.stop_reason == "bot_disconnected"  # type: ignore[attr-defined]
    assert "user" in s.stop_detail  # type: ignore[attr-defined]
    assert got_a.ended.reason == bridge_pb2.STOP_REASON_BOT_DISCONNECTED
    assert events[-1].status == bridge_pb2.RUN_STATUS_FAILED


async def test_cancel(bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub) -> None:
    run_id = await start_run(stub, [scenario("a"), scenario("b")], concurrency=1)
    u = TestBot(bridge.address, common_pb2.ROLE_USER, talk_forever, run_filter=run_id)
    a = TestBot(bridge.address, common_pb2.ROLE_AGENT, talk_forever, run_filter=run_id)
    tasks = [asyncio.create_task(u.run()), asyncio.create_task(a.run())]
    await asyncio.wait_for(a.started.wait(), 10)
    response = await stub.CancelRun(bridge_pb2.CancelRunRequest(run_id=run_id))
    assert response.run.status == bridge_pb2.RUN_STATUS_CANCELLED
    await asyncio.gather(*tasks)
    assert a.got.ended.reason == bridge_pb2.STOP_REASON_CANCELLED
    with RecordingReader(bridge.db_path) as reader:
        sessions = reader.sessions(run_id)
        # The second scenario never started: nothing is invented for it.
        assert [s.stop_reason for s in sessions] == ["cancelled"]
        assert reader.get_run(run_id).status == "cancelled"  # type: ignore[union-attr]


async def test_shutdown_ends_live_sessions(make_bridge: object) -> None:
    server: BridgeServer = await make_bridge()  # type: ignore[operator]
    async with __import__("grpc").aio.insecure_channel(server.address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        run_id = await start_run(stub, [scenario()])
        u = TestBot(
            server.address,
            common_pb2.ROLE_USER,
            talk_forever,
            run_filter=run_id,
            final_state={"u": 1},
        )
        a = TestBot(
            server.address,
            common_pb2.ROLE_AGENT,
            talk_forever,
            run_filter=run_id,
            final_state={"a": 1},
        )
        tasks = [asyncio.create_task(u.run()), asyncio.create_task(a.run())]
        await asyncio.wait_for(a.started.wait(), 10)
        await server.stop()
        await asyncio.gather(*tasks)
    assert a.got.ending.reason == bridge_pb2.STOP_REASON_SHUTDOWN
    with RecordingReader(server.db_path) as reader:
        (s,) = reader.sessions(run_id)
        assert s.stop_reason == "shutdown" and s.ended_ns is not None
        assert set(reader.final_states(s.session_id)) == {"user", "agent"}
        assert reader.get_run(run_id).status == "failed"  # type: ignore[union-attr]
