"""Redirects: paired bots that accept them converse at one worker; others stay at the front door.

Everything is real: the front door and two worker processes serve gRPC on
loopback over one SQLite file; the bots are gRPC clients written against the
generated stubs. Each recorded attempt names the process that served it.
"""

from __future__ import annotations

import asyncio
import os

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import scenario, start_run, watch
from tests.bridge_service.workers.conftest import AGENT, USER, at_worker, join, worker_pids
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.read.reader import RecordingReader


async def talk(bot: TestBot) -> None:
    await bot.speak(tone(0.3, 16000))
    if bot.role == AGENT:
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)


async def test_paired_bots_that_accept_redirects_converse_at_one_worker(
    front_door: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id = await start_run(stub, [scenario()], max_auto_retries=0)
    here = [
        TestBot(front_door.address, role, join=join(role, redirect=True, run_filter=run_id))
        for role in (USER, AGENT)
    ]
    for got in await asyncio.wait_for(asyncio.gather(*(b.run() for b in here)), 20):
        assert got.redirect is not None and got.start is None
        assert got.status == got.status.OK, got.details  # the front door's stream ends OK
    user_redirect, agent_redirect = (b.got.redirect for b in here)
    assert user_redirect.port == agent_redirect.port, "both bots are sent to one worker"
    assert user_redirect.session_id == agent_redirect.session_id
    assert user_redirect.ticket != agent_redirect.ticket
    assert user_redirect.arrive_within_ms == 60_000
    there = [at_worker(b, talk) for b in here]
    got_u, got_a, _events = await asyncio.wait_for(
        asyncio.gather(*(b.run() for b in there), watch(stub, run_id)), 30
    )
    assert got_u.start.session.session_id == got_a.start.session.session_id
    assert got_u.ended.reason == bridge_pb2.STOP_REASON_END_TOOL and got_u.status == got_u.status.OK
    assert len(got_u.frames) > 10 and len(got_a.frames) > 10  # audio crossed, inside the worker

    with RecordingReader(front_door.db_path) as reader:
        (session,) = reader.sessions(run_id)
        bridges = reader.session_bridges(run_id)
        channels = reader.channel_rates(session.session_id)
    assert session.stop_reason == "end_tool" and session.user_bot["name"] == "testbot"
    served = bridges[session.session_id]
    assert served["pid"] in worker_pids(front_door) and served["pid"] != os.getpid()
    assert served["address"] == f"127.0.0.1:{user_redirect.port}"
    assert served["worker"] in (1, 2) and served["front_door"] == front_door.address
    assert {str(c) for c in channels} == {"user", "agent", "to_user", "to_agent"}

    run = (await stub.GetRun(bridge_pb2.GetRunRequest(run_id=run_id))).run
    (summary,) = run.sessions
    assert summary.bridge.pid == served["pid"] and summary.bridge.worker == served["worker"]
    assert summary.bridge.address == served["address"] and summary.bridge.HasField("worker")


async def test_bots_that_do_not_accept_redirects_are_served_by_the_front_door(
    front_door: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    """An unchanged client, and a pair where only one bot accepts redirects."""
    for user_redirects in (False, True):
        run_id = await start_run(stub, [scenario()], max_auto_retries=0)
        bots = [
            TestBot(front_door.address, USER, talk, join=join(USER, redirect=user_redirects,
                                                              run_filter=run_id)),
            TestBot(front_door.address, AGENT, talk, run_filter=run_id),
        ]  # fmt: skip
        got_u, got_a, _events = await asyncio.wait_for(
            asyncio.gather(*(b.run() for b in bots), watch(stub, run_id)), 30
        )
        assert got_u.redirect is None and got_a.redirect is None
        assert got_u.ended.reason == bridge_pb2.STOP_REASON_END_TOOL
        with RecordingReader(front_door.db_path) as reader:
            (session,) = reader.sessions(run_id)
            served = reader.session_bridges(run_id)[session.session_id]
        assert session.stop_reason == "end_tool"
        assert served["pid"] == os.getpid() and served["worker"] is None
        assert served["address"] == front_door.address
        run = (await stub.GetRun(bridge_pb2.GetRunRequest(run_id=run_id))).run
        assert not run.sessions[0].bridge.HasField("worker")
        assert run.sessions[0].bridge.pid == os.getpid()
