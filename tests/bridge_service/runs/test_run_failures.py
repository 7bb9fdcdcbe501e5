"""A bridge that fails is said so: `bridge_error` sessions, `failed` runs with their error.

These failures cannot be produced from outside (they are bugs or crashes of
the bridge itself), so each test breaks one internal step of a real bridge
with ``monkeypatch`` and checks that the session and the run never read as
finished or completed, and that WatchRun, GetRun and the store carry the error.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import TEST_SETTINGS, scenario, start_run, watch
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.runs import attempt as session_module
from vae.bridge_service.server import BridgeServer
from vae.bridge_service.session import inputs as session_io_module
from vae.cli.main import vae
from vae.common.v1 import common_pb2
from vae.recordings.errors import StorageError
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.selection import ResumeState, classify_resume
from vae.recordings.write.batch_commit import BatchCommitter


async def talk(bot: TestBot) -> None:
    await bot.speak(tone(0.3, 16000))
    await bot.ending.wait()


async def test_a_session_the_bridge_fails_is_bridge_error(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub, monkeypatch: Any
) -> None:
    async def broken(_self: Any) -> None:
        raise RuntimeError("the clock broke")

    monkeypatch.setattr(session_module.OpenMicClock, "run", broken)
    run_id = await start_run(stub, [scenario("s1")], max_auto_retries=0)
    bots = [
        TestBot(bridge.address, role, talk, run_filter=run_id)
        for role in (common_pb2.ROLE_USER, common_pb2.ROLE_AGENT)
    ]
    *_, events = await asyncio.gather(*(b.run() for b in bots), watch(stub, run_id))
    assert events[-1].status == bridge_pb2.RUN_STATUS_FAILED
    assert "s1: bridge_error" in events[-1].message and "the clock broke" in events[-1].message
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        run = reader.get_run(run_id)
    assert s.stop_reason == "bridge_error" and s.clean_exit is False
    assert "RuntimeError: the clock broke" in s.stop_detail
    assert run is not None and run.status == "failed" and "bridge_error" in run.error


@pytest.mark.parametrize("use_cli", [False, True])
async def test_an_exception_while_running_a_run_fails_it(
    bridge: BridgeServer,
    stub: bridge_pb2_grpc.BridgeServiceStub,
    monkeypatch: Any,
    use_cli: bool,
    tmp_path: Any,
) -> None:
    async def broken(*_args: Any) -> Any:
        raise RuntimeError("scheduler exploded")

    assert bridge.runs is not None
    monkeypatch.setattr(bridge.runs.executor, "_attempt", broken)
    if use_cli:
        path = tmp_path / "s.json"
        path.write_text('{"name": "s1"}')
        result = await asyncio.to_thread(
            CliRunner().invoke, vae, ["run", str(path), "--bridge", bridge.address, "--run-id", "x"]
        )
        assert result.exit_code == 1
        assert "run x failed: the bridge failed running the run" in result.stdout
        assert "scheduler exploded" in result.stdout and "completed" not in result.stdout
        shown = CliRunner().invoke(vae, ["runs", "show", "x", "--db", str(bridge.db_path)])
        assert "RuntimeError: scheduler exploded" in shown.stdout
        return
    run_id = await start_run(stub, [scenario("s1"), scenario("s2")])
    events = await watch(stub, run_id)
    assert events[-1].kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED
    assert events[-1].status == bridge_pb2.RUN_STATUS_FAILED
    assert "RuntimeError: scheduler exploded" in events[-1].message
    got = await stub.GetRun(bridge_pb2.GetRunRequest(run_id=run_id))
    assert got.run.status == bridge_pb2.RUN_STATUS_FAILED
    assert "scheduler exploded" in got.run.error
    assert got.run.scenarios_done < got.run.scenarios_total


async def test_a_failing_message_handler_is_bridge_error_not_the_bot_leaving(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub, monkeypatch: Any
) -> None:
    """A bug in handling a bot's message is the bridge's failure: never `bot_disconnected`."""

    async def broken(_self: Any, *_args: Any) -> None:
        raise RuntimeError("the event handler broke")

    monkeypatch.setattr(session_io_module.SessionIO, "_on_event", broken)

    async def metric_then_talk(bot: TestBot) -> None:
        await bot.event(metric=common_pb2.Metric(name="ttfb", value=1.0))
        await talk(bot)

    run_id = await start_run(stub, [scenario("s1")], max_auto_retries=0)
    bots = [
        TestBot(bridge.address, common_pb2.ROLE_USER, metric_then_talk, run_filter=run_id),
        TestBot(bridge.address, common_pb2.ROLE_AGENT, talk, run_filter=run_id),
    ]
    *got, events = await asyncio.gather(*(b.run() for b in bots), watch(stub, run_id))
    assert events[-1].status == bridge_pb2.RUN_STATUS_FAILED
    assert "s1: bridge_error" in events[-1].message
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        decisions = classify_resume(reader, run_id)
    assert s.stop_reason == "bridge_error" and s.clean_exit is False
    assert "RuntimeError: the event handler broke" in s.stop_detail
    assert decisions[0].state is ResumeState.IN_FLIGHT  # `vae run --resume` runs it again
    # Both bots are told the session ended, and why (not a stream that just stops).
    for received in got:
        assert received.status == grpc.StatusCode.OK
        assert received.ended is not None
        assert received.ended.reason == bridge_pb2.STOP_REASON_BRIDGE_ERROR
        assert received.ended.clean_exit is False


async def test_storage_failing_on_the_final_flush_leaves_the_run_failed(
    db_path: Path, monkeypatch: Any
) -> None:
    """The store fails exactly when the run's `completed` is committed: the store reads `failed`."""
    commit = BatchCommitter.commit

    async def failing(self: BatchCommitter, groups: list[Any]) -> None:
        if any(sql.startswith("UPDATE runs SET status") for sql, _ in groups):
            # What a full disk does here (batch_commit): keep the salvageable rows, fail.
            self._keep_salvageable(groups)
            raise StorageError(f"{self.path} cannot be written: database or disk is full")
        await commit(self, groups)

    server = BridgeServer(db_path, TEST_SETTINGS)
    await server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            run_id = await start_run(stub, [scenario("s1")], max_auto_retries=0)
            monkeypatch.setattr(BatchCommitter, "commit", failing)
            bots = [
                TestBot(server.address, common_pb2.ROLE_USER, talk, run_filter=run_id),
                TestBot(server.address, common_pb2.ROLE_AGENT, end_tool, run_filter=run_id),
            ]
            *_, events = await asyncio.gather(*(b.run() for b in bots), watch(stub, run_id))
        assert events[-1].status == bridge_pb2.RUN_STATUS_FAILED
        assert "storage failed" in events[-1].message
    finally:
        await server.stop()  # salvages the final statuses, in the order they were queued
    with RecordingReader(db_path) as reader:
        run = reader.get_run(run_id)
    assert run is not None and run.status == "failed"
    assert "disk is full" in run.error


async def end_tool(bot: TestBot) -> None:
    await bot.speak(tone(0.3, 16000))
    await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)
