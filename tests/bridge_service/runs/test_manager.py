"""Runs: concurrency, retries, resume and its dry run, run queries."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import scenario, start_run, watch
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.read.reader import RecordingReader

USER, AGENT = common_pb2.ROLE_USER, common_pb2.ROLE_AGENT


async def short_talk(bot: TestBot) -> None:
    await bot.speak(tone(0.25, bot.send_rate, 200 + 20 * int(bot.name.split("-")[1])))
    if bot.role == AGENT:
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)


async def quiet(bot: TestBot) -> None:
    """Never speaks."""


async def pairs(
    bridge: BridgeServer, run_id: str, n: int, user: object, agent: object
) -> dict[str, TestBot]:
    bots = [
        TestBot(
            bridge.address, role, beh, run_filter=run_id, name=f"{role}-{i}", final_state={"i": i}
        )
        for i in range(n)
        for role, beh in ((USER, user), (AGENT, agent))
    ]
    await asyncio.gather(*(b.run() for b in bots))
    return {b.name: b for b in bots}


async def test_twenty_concurrent_sessions(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    docs = [scenario(f"s{i:02d}") for i in range(20)]
    run_id = await start_run(stub, docs, concurrency=20, inactivity_timeout_s=10)
    bots, events = await asyncio.gather(
        pairs(bridge, run_id, 20, short_talk, short_talk), watch(stub, run_id, 60)
    )
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    started = [e for e in events if e.kind == bridge_pb2.RUN_EVENT_KIND_SESSION_STARTED]
    assert len(started) == 20
    # A late watcher gets the whole history replayed.
    assert [e.kind for e in await watch(stub, run_id)] == [e.kind for e in events]
    with RecordingReader(bridge.db_path) as reader:
        sessions = reader.sessions(run_id)
        assert sorted(s.scenario_name for s in sessions) == [d["name"] for d in docs]
        for s in sessions:
            assert s.stop_reason == "end_tool" and s.user_turns >= 1 and s.agent_turns >= 1
            user_pcm = b"".join(x.pcm for x in reader.segments(s.session_id, "user"))
            agent_pcm = b"".join(x.pcm for x in reader.segments(s.session_id, "agent"))
            # Each session holds exactly its own two bots' audio (distinct tones).
            assert user_pcm == bytes(bots[str(s.user_bot["name"])].sent_pcm)
            assert agent_pcm == bytes(bots[str(s.agent_bot["name"])].sent_pcm)
            assert len(user_pcm) == 2 * 4000
            assert set(reader.final_states(s.session_id)) == {"user", "agent"}


async def test_stale_attempt_is_retried(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id = await start_run(
        stub, [scenario()], inactivity_timeout_s=0.5, max_auto_retries=1, auto_retry_backoff_s=0.05
    )
    _, events = await asyncio.gather(pairs(bridge, run_id, 2, quiet, quiet), watch(stub, run_id))
    assert any(e.kind == bridge_pb2.RUN_EVENT_KIND_SESSION_RETRYING for e in events)
    with RecordingReader(bridge.db_path) as reader:
        first, second = reader.sessions(run_id)
    assert (first.attempt, first.status, second.attempt) == (1, "superseded", 2)
    assert first.superseded_reason.startswith("retried: stale")
    assert second.retry_reason.startswith("stale") and second.status == "ended"
    # Still no turns after the retry: the run reports the failure.
    assert events[-1].status == bridge_pb2.RUN_STATUS_FAILED


@pytest.mark.parametrize(("retry", "attempts"), [(False, 1), (True, 2)])
async def test_insufficient_turns(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub, retry: bool, attempts: int
) -> None:
    run_id = await start_run(
        stub,
        [scenario()],
        min_agent_turns=3,
        auto_resume_on_insufficient_turns=retry,
        auto_retry_backoff_s=0.05,
        inactivity_timeout_s=10,
    )
    await asyncio.gather(
        pairs(bridge, run_id, attempts, short_talk, short_talk), watch(stub, run_id)
    )
    with RecordingReader(bridge.db_path) as reader:
        sessions = reader.sessions(run_id)
    assert len(sessions) == attempts
    assert sessions[0].agent_turns == 1
    if retry:
        assert sessions[1].retry_reason == "insufficient agent turns: 1 < 3"


async def test_resume_and_dry_run(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    docs = [scenario("done"), scenario("stale"), scenario("never")]
    run_id = await start_run(
        stub, docs, concurrency=1, max_auto_retries=0, inactivity_timeout_s=0.5
    )
    await pairs(bridge, run_id, 1, short_talk, short_talk)  # "done"
    await pairs(bridge, run_id, 1, quiet, quiet)  # "stale": 0 turns
    await stub.CancelRun(bridge_pb2.CancelRunRequest(run_id=run_id))  # "never" never starts

    check = await stub.StartRun(bridge_pb2.StartRunRequest(resume=run_id[:10], dry_run=True))
    states = {c.scenario_name: (c.state, c.reason) for c in check.classifications}
    assert states["done"][0] == bridge_pb2.RESUME_STATE_COMPLETED
    assert states["stale"][0] == bridge_pb2.RESUME_STATE_IN_FLIGHT
    assert "0 conversation turns" in states["stale"][1]
    assert states["never"] == (bridge_pb2.RESUME_STATE_FRESH, "never started")
    with RecordingReader(bridge.db_path) as reader:
        assert len(reader.sessions(run_id)) == 2  # a dry run changes nothing

    await stub.StartRun(bridge_pb2.StartRunRequest(resume=run_id))
    _, events = await asyncio.gather(
        pairs(bridge, run_id, 2, short_talk, short_talk), watch(stub, run_id)
    )
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    with RecordingReader(bridge.db_path) as reader:
        by = {(s.scenario_name, s.attempt): s for s in reader.sessions(run_id)}
    assert set(by) == {("done", 1), ("stale", 1), ("stale", 2), ("never", 1)}
    assert by[("stale", 1)].status == "superseded" and by[("done", 1)].status == "ended"
    assert by[("stale", 2)].retry_reason.startswith("resume:")


async def speak_then_bad_audio(bot: TestBot) -> None:
    await bot.speak(tone(0.6, bot.send_rate, 300))
    await bot.audio(b"\x01\x02\x03")  # odd byte count: bot_error


async def test_resume_keeps_a_run_failed_by_a_bot_error_failed(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    """A resume with nothing to re-run never turns a failed run into a completed one."""
    run_id = await start_run(stub, [scenario("s1")], max_auto_retries=0)
    bots = [
        TestBot(bridge.address, USER, speak_then_bad_audio, run_filter=run_id),
        TestBot(bridge.address, AGENT, quiet, run_filter=run_id, final_state={"ok": 1}),
    ]
    *_, first = await asyncio.gather(*(b.run() for b in bots), watch(stub, run_id))
    assert first[-1].status == bridge_pb2.RUN_STATUS_FAILED
    assert "s1: bot_error" in first[-1].message

    check = await stub.StartRun(bridge_pb2.StartRunRequest(resume=run_id, dry_run=True))
    assert [c.state for c in check.classifications] == [bridge_pb2.RESUME_STATE_COMPLETED]
    await stub.StartRun(bridge_pb2.StartRunRequest(resume=run_id))
    events = await watch(stub, run_id)
    assert events[-1].status == bridge_pb2.RUN_STATUS_FAILED
    assert "s1: bot_error" in events[-1].message
    got = await stub.GetRun(bridge_pb2.GetRunRequest(run_id=run_id))
    assert got.run.status == bridge_pb2.RUN_STATUS_FAILED and "s1: bot_error" in got.run.error
    with RecordingReader(bridge.db_path) as reader:
        run = reader.get_run(run_id)
        assert len(reader.sessions(run_id)) == 1  # nothing was re-run
    assert run is not None and run.status == "failed" and "bot_error" in run.error


async def test_run_queries_and_errors(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id = await start_run(stub, [scenario()], run_id="named-run", tags=["nightly"])
    assert run_id == "named-run"
    got = await stub.GetRun(bridge_pb2.GetRunRequest(run_id="named"))
    assert got.run.status == bridge_pb2.RUN_STATUS_RUNNING and got.run.scenarios_total == 1
    assert list(got.run.options.tags) == ["nightly"] and got.run.vae_version
    listed = await stub.ListRuns(bridge_pb2.ListRunsRequest(prefix="named"))
    assert [r.run_id for r in listed.runs] == ["named-run"]
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await start_run(stub, [scenario()], run_id="named-run")
    assert exc.value.code() == grpc.StatusCode.ALREADY_EXISTS
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await stub.GetRun(bridge_pb2.GetRunRequest(run_id="nope"))
    assert exc.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await stub.StartRun(bridge_pb2.StartRunRequest(resume="named-run"))
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await start_run(stub, [scenario()], concurrency=0)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "concurrency" in (exc.value.details() or "")
    await stub.CancelRun(bridge_pb2.CancelRunRequest(run_id="named-run"))
