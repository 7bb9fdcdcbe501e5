"""Pacing a run: CancelRun with drain lets the calls under way finish; ramp_up_s spaces starts."""

from __future__ import annotations

import asyncio
import itertools

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import scenario, start_run, watch
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import Side
from vae.recordings.read.reader import RecordingReader

USER, AGENT = common_pb2.ROLE_USER, common_pb2.ROLE_AGENT


def held_talk(release: asyncio.Event):  # type: ignore[no-untyped-def]
    """A bot that speaks once the test releases it; the agent then ends the call."""

    async def behaviour(bot: TestBot) -> None:
        await release.wait()
        await bot.speak(tone(0.2, bot.send_rate, 300))
        if bot.role == AGENT:
            await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)

    return behaviour


async def test_a_drained_run_finishes_what_it_started_and_drops_the_rest(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    docs = [scenario(f"s{i}") for i in range(6)]
    run_id = await start_run(stub, docs, concurrency=2, max_auto_retries=0, inactivity_timeout_s=10)
    release = asyncio.Event()
    behaviour = held_talk(release)
    bots = [
        TestBot(bridge.address, role, behaviour, run_filter=run_id, name=f"{role}-{i}")
        for i in range(2)
        for role in (USER, AGENT)
    ]
    watching = asyncio.create_task(watch(stub, run_id))
    playing = asyncio.gather(*(b.run() for b in bots))
    await asyncio.wait_for(asyncio.gather(*(b.started.wait() for b in bots)), 20)
    answer = await stub.CancelRun(bridge_pb2.CancelRunRequest(run_id=run_id, drain=True))
    # The drain answers at once: the two calls are still under way.
    assert answer.run.status == bridge_pb2.RUN_STATUS_RUNNING
    release.set()
    await playing
    events = await watching
    final = events[-1]
    assert final.status == bridge_pb2.RUN_STATUS_COMPLETED, final.message
    assert (final.scenarios_done, final.scenarios_total) == (2, 2)
    run = (await stub.GetRun(bridge_pb2.GetRunRequest(run_id=run_id))).run
    assert (run.status, run.scenarios_total) == (bridge_pb2.RUN_STATUS_COMPLETED, 2)
    with RecordingReader(bridge.db_path) as reader:
        sessions = reader.sessions(run_id)
        kept = [s.scenario_name for s in reader.run_scenarios(run_id)]
    assert sorted(s.scenario_name for s in sessions) == ["s0", "s1"] == sorted(kept)
    assert {s.stop_reason for s in sessions} == {"end_tool"}


async def test_ramp_up_spaces_the_first_sessions_of_a_run(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    release = asyncio.Event()
    release.set()
    behaviour = held_talk(release)
    # Every bot waits before the run starts, so only the ramp can space the starts.
    bots = [
        TestBot(bridge.address, role, behaviour, name=f"{role}-{i}")
        for i in range(3)
        for role in (USER, AGENT)
    ]
    playing = asyncio.gather(*(b.run() for b in bots))
    async with asyncio.timeout(20):
        for role in (Side.USER, Side.AGENT):
            await bridge.pool.until_waiting(role, 3)
    run_id = await start_run(
        stub,
        [scenario(f"s{i}") for i in range(3)],
        concurrency=3,
        ramp_up_s=0.9,
        max_auto_retries=0,
        inactivity_timeout_s=10,
    )
    events = await watch(stub, run_id)
    await playing
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    with RecordingReader(bridge.db_path) as reader:
        starts = sorted(s.started_ns for s in reader.sessions(run_id))
    gaps = [(b - a) / 1e9 for a, b in itertools.pairwise(starts)]
    # 0.9 s over 3 slots: each start 0.3 s after the one before (pairing adds little).
    assert all(0.25 <= g <= 0.6 for g in gaps), gaps
