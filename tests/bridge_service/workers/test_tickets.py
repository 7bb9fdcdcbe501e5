"""Tickets: a worker admits only the bots redirected to it, once each, while their session waits.

A forged ticket, a ticket for the other role, a ticket used twice, a ticket
whose session stopped waiting, no ticket at a worker and a ticket at the
front door are each refused with a status and a message that says what to do.
A redirected bot that never arrives leaves its attempt recorded
``peer_never_joined`` (unfinished), and its peer is let go with WaitTimeout.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import scenario, start_run, watch
from tests.bridge_service.workers.conftest import AGENT, USER, at_worker, join
from tests.helpers import wait_until
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.internal.v1 import worker_pb2_grpc
from vae.recordings.read.reader import RecordingReader


def worker_address(server: BridgeServer, index: int = 0) -> str:
    assert server.workers is not None
    return f"127.0.0.1:{server.workers.workers[index].port}"


async def redirected_pair(
    server: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub, **options: object
) -> tuple[str, list[TestBot]]:
    """Start a one-scenario run and let a redirect-following pair be redirected."""
    run_id = await start_run(stub, [scenario()], max_auto_retries=0, **options)
    bots = [
        TestBot(server.address, role, join=join(role, redirect=True, run_filter=run_id))
        for role in (USER, AGENT)
    ]
    await asyncio.wait_for(asyncio.gather(*(b.run() for b in bots)), 20)
    assert all(b.got.redirect is not None for b in bots)
    return run_id, bots


async def test_forged_missing_misdirected_and_front_door_tickets_are_refused(
    front_door: BridgeServer,
) -> None:
    worker = worker_address(front_door)
    forged = await TestBot(worker, USER, join=join(USER, ticket="made-up")).run()
    assert forged.status == grpc.StatusCode.PERMISSION_DENIED
    assert "unknown to worker" in forged.details and front_door.address in forged.details
    assert forged.joined is None

    none = await TestBot(worker, USER, join=join(USER)).run()
    assert none.status == grpc.StatusCode.FAILED_PRECONDITION
    assert f"join {front_door.address}" in none.details, none.details

    at_front = await TestBot(front_door.address, USER, join=join(USER, ticket="x")).run()
    assert at_front.status == grpc.StatusCode.FAILED_PRECONDITION
    assert "issued no ticket" in at_front.details


async def test_a_ticket_is_good_once_for_its_role_only(
    front_door: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id, (user, agent) = await redirected_pair(front_door, stub)
    port, user_ticket = user.got.redirect.port, user.got.redirect.ticket
    worker = f"127.0.0.1:{port}"
    wrong_role = await TestBot(worker, AGENT, join=join(AGENT, ticket=user_ticket)).run()
    assert wrong_role.status == grpc.StatusCode.PERMISSION_DENIED
    assert "issued for the user bot" in wrong_role.details

    async def talk(bot: TestBot) -> None:
        await bot.speak(tone(0.3, 16000))
        if bot.role == AGENT:
            await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)

    first = at_worker(user, talk)
    first_run = asyncio.create_task(first.run())
    await wait_until(lambda: first.got.joined is not None, 10, "the first stream joined")
    # The same ticket again while its first stream waits for the peer.
    twice = await at_worker(user).run()
    assert twice.status == grpc.StatusCode.FAILED_PRECONDITION
    assert "already used" in twice.details and front_door.address in twice.details
    got_u, _got_a, _ = await asyncio.wait_for(
        asyncio.gather(first_run, at_worker(agent, talk).run(), watch(stub, run_id)), 30
    )
    assert got_u.ended.reason == bridge_pb2.STOP_REASON_END_TOOL
    # And once the session is over.
    after = await at_worker(agent).run()
    assert after.status == grpc.StatusCode.FAILED_PRECONDITION
    assert "already used" in after.details


async def test_a_redirected_bot_that_never_arrives_leaves_the_attempt_unfinished(
    front_door: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id, (user, agent) = await redirected_pair(front_door, stub, pairing_timeout_s=1.5)
    assert user.got.redirect.arrive_within_ms == 1500
    # Only the user goes to the worker; the agent bot is never seen again.
    arrived, events = await asyncio.wait_for(
        asyncio.gather(at_worker(user).run(), watch(stub, run_id)), 20
    )
    assert arrived.joined is not None and arrived.start is None
    assert arrived.wait_timeout is not None and arrived.status == grpc.StatusCode.OK
    assert events[-1].status == bridge_pb2.RUN_STATUS_FAILED
    with RecordingReader(front_door.db_path) as reader:
        (session,) = reader.sessions(run_id)
        served = reader.session_bridges(run_id)[session.session_id]
    assert session.stop_reason == "peer_never_joined"
    assert session.stop_detail.startswith("no agent bot joined within 1.5 s (redirected to worker")
    assert served["address"] == f"127.0.0.1:{user.got.redirect.port}"
    late = await at_worker(agent).run()
    assert late.status == grpc.StatusCode.FAILED_PRECONDITION
    assert "stopped waiting" in late.details, late.details


async def test_a_worker_refuses_run_control_and_guards_its_internal_service(
    front_door: BridgeServer,
) -> None:
    worker = worker_address(front_door)
    async with grpc.aio.insecure_channel(worker) as channel:
        bridge = bridge_pb2_grpc.BridgeServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await bridge.ListRuns(bridge_pb2.ListRunsRequest())
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert front_door.address in (refused.value.details() or "")
        health = health_pb2_grpc.HealthStub(channel)
        reply = await health.Check(health_pb2.HealthCheckRequest(service=""))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        # The internal service is not on the bots' port at all.
        internal = worker_pb2_grpc.BridgeWorkerStub(channel)
        call = internal.RunSession(iter(()))  # no message: its refusal cannot race a send
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await call.read()
        assert missing.value.code() == grpc.StatusCode.UNIMPLEMENTED
    # It is on a loopback port of its own, and refuses a caller without the secret.
    assert front_door.workers is not None
    control = front_door.workers.workers[0].control_address
    assert control.startswith("127.0.0.1:")
    async with grpc.aio.insecure_channel(control) as channel:
        call = worker_pb2_grpc.BridgeWorkerStub(channel).RunSession(iter(()))
        with pytest.raises(grpc.aio.AioRpcError) as unauthenticated:
            await call.read()
        assert unauthenticated.value.code() == grpc.StatusCode.UNAUTHENTICATED
