"""Cancel, shutdown and dying workers: a session at a worker ends the way the run expects.

- CancelRun at the front door ends a worker's session ``cancelled`` (the bots
  still get SessionEnding); the run reads ``cancelled``.
- Stopping the front door ends a worker's session ``shutdown``, records it and
  stops every worker process (the fixture checks none outlives it).
- A worker killed with SIGKILL mid-session: the front door stays up, records
  the attempt ``worker_lost`` (unfinished), restarts the worker, and the run's
  automatic retry completes the run — with the reference bots, which follow
  redirects and rejoin by themselves.
- A worker stopped alone with SIGTERM records its session ``worker_lost``
  itself (the run retries it), and is restarted.
"""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from typing import Any

from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import inline, scenario, start_run, watch
from tests.bridge_service.workers.conftest import AGENT, USER, alive, at_worker, join, worker_pids
from tests.helpers import wait_until
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bots.sound.speech import BuzzSynthesiser
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.recordings.read.reader import RecordingReader
from vae.serving import client_channel


async def keep_talking(bot: TestBot) -> None:
    await bot.speak(tone(20.0, 16000))


async def live_pair(
    server: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> tuple[str, list[TestBot], list[asyncio.Task[Any]]]:
    """A run whose one session is live at a worker (both bots started talking)."""
    run_id = await start_run(stub, [scenario(max_duration=40)], max_auto_retries=0)
    here = [
        TestBot(server.address, role, join=join(role, redirect=True, run_filter=run_id))
        for role in (USER, AGENT)
    ]
    await asyncio.wait_for(asyncio.gather(*(b.run() for b in here)), 20)
    there = [at_worker(b, keep_talking) for b in here]
    tasks = [asyncio.create_task(b.run()) for b in there]
    await asyncio.wait_for(asyncio.gather(*(b.started.wait() for b in there)), 20)
    return run_id, there, tasks


async def test_cancel_run_ends_a_worker_session_cancelled(
    front_door: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id, _bots, tasks = await live_pair(front_door, stub)
    cancelled = await stub.CancelRun(bridge_pb2.CancelRunRequest(run_id=run_id))
    assert cancelled.run.status == bridge_pb2.RUN_STATUS_CANCELLED
    got = await asyncio.wait_for(asyncio.gather(*tasks), 20)
    for g in got:
        assert g.ending is not None, (g.status, g.details)
        assert g.ending.reason == bridge_pb2.STOP_REASON_CANCELLED, g.ending
        assert g.ended is not None and g.status == g.status.OK, (g.status, g.details)
    (summary,) = cancelled.run.sessions
    assert summary.stop_reason == bridge_pb2.STOP_REASON_CANCELLED, summary
    assert summary.bridge.HasField("worker") and summary.bridge.pid in worker_pids(front_door)


async def test_stopping_the_front_door_ends_worker_sessions_and_stops_the_workers(
    front_door: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id, _bots, tasks = await live_pair(front_door, stub)
    pids = worker_pids(front_door)
    await asyncio.wait_for(front_door.stop(), 30)
    got = await asyncio.wait_for(asyncio.gather(*tasks), 20)
    assert all(g.ending.reason == bridge_pb2.STOP_REASON_SHUTDOWN for g in got)
    with RecordingReader(front_door.db_path) as reader:
        (session,) = reader.sessions(run_id)
        run = reader.get_run(run_id)
        served = reader.session_bridges(run_id)[session.session_id]
    assert session.stop_reason == "shutdown" and session.ended_ns
    assert served["pid"] in pids
    assert run is not None and str(run.status) == "failed" and "shut down" in run.error
    assert not [pid for pid in pids if alive(pid)], "a worker still runs"


def story(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "domain": "airline",
        "max_duration": 40,
        "user": {"script": ["Hi, I would like to change my flight to Friday please."]},
        "agent": {
            "script": [
                "Hello, this is the airline, how can I help you today?",
                {"say": "Of course. Done, you are on the Friday flight.", "end": True},
            ]
        },
        "success_signals": ["CLEAN_EXIT"],
    }


async def _run_with_reference_bots(
    server: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub, kill: signal.Signals
) -> tuple[str, int, list[Any]]:
    """Two scenarios at once (one per worker); ``kill`` one worker mid-session."""
    run_id = f"w-{uuid.uuid4().hex[:8]}"
    stop = asyncio.Event()
    bots = [
        BotConfig(server.address, role, lambda: play_script, concurrency=2,
                  synth=BuzzSynthesiser(), run_filter=run_id)
        for role in ("user", "agent")
    ]  # fmt: skip
    async with asyncio.timeout(120), asyncio.TaskGroup() as tg:
        for config in bots:
            tg.create_task(run_bots(config, stop))
        try:
            await stub.StartRun(
                bridge_pb2.StartRunRequest(
                    run_id=run_id,
                    sources=inline(story("k1"), story("k2")),
                    options=bridge_pb2.RunOptions(concurrency=2, auto_retry_backoff_s=0.5),
                )
            )
            db = server.db_path
            await wait_until(lambda: _live_at_workers(db, run_id) == 2, 30, "two live sessions")
            victim = worker_pids(server)[0]
            os.kill(victim, kill)
            events = await watch(stub, run_id, 90)
        finally:
            stop.set()
    return run_id, victim, events


def _live_at_workers(db: Any, run_id: str) -> int:
    with RecordingReader(db) as reader:
        bridges = reader.session_bridges(run_id)
        return sum(
            1
            for s in reader.sessions(run_id)
            if s.status == "running"
            and bridges.get(s.session_id, {}).get("worker")
            and reader.channel_rates(s.session_id)
        )


async def test_a_worker_killed_mid_run_is_replaced_and_the_retry_completes_the_run(
    front_door: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id, victim, events = await _run_with_reference_bots(front_door, stub, signal.SIGKILL)
    with RecordingReader(front_door.db_path) as reader:
        sessions = reader.sessions(run_id)
        bridges = reader.session_bridges(run_id)
    seen = [
        (s.session_id, s.stop_reason, s.stop_detail, bridges.get(s.session_id)) for s in sessions
    ]
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED, (events[-1].message, seen)
    assert any(e.kind == bridge_pb2.RUN_EVENT_KIND_SESSION_RETRYING for e in events)
    lost = [s for s in sessions if s.stop_reason == "worker_lost"]
    assert len(lost) == 1, [(s.session_id, s.stop_reason) for s in sessions]
    assert str(lost[0].status) == "superseded" and "killed by SIGKILL" in lost[0].stop_detail
    assert bridges[lost[0].session_id]["pid"] == victim
    finished = [s for s in sessions if str(s.status) == "ended"]
    assert sorted(s.scenario_name for s in finished) == ["k1", "k2"]
    assert all(s.stop_reason == "end_tool" for s in finished)
    # The front door stayed up and replaced the worker.
    assert front_door.workers is not None and front_door.workers.restarts == 1
    assert victim not in worker_pids(front_door)
    async with client_channel(front_door.address) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_a_worker_stopped_alone_records_its_sessions_worker_lost(
    front_door: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id, victim, events = await _run_with_reference_bots(front_door, stub, signal.SIGTERM)
    with RecordingReader(front_door.db_path) as reader:
        sessions = reader.sessions(run_id)
        bridges = reader.session_bridges(run_id)
    seen = [
        (s.session_id, s.stop_reason, s.stop_detail, bridges.get(s.session_id)) for s in sessions
    ]
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED, (events[-1].message, seen)
    (lost,) = [s for s in sessions if s.stop_reason == "worker_lost"]
    assert "was stopped (SIGTERM)" in lost.stop_detail, lost.stop_detail
    assert bridges[lost.session_id]["pid"] == victim
    assert lost.ended_ns and lost.user_turns + lost.agent_turns >= 0
    assert front_door.workers is not None and front_door.workers.restarts == 1
