"""The Node example, unchanged, against a bridge on every core (``--workers 2``).

The Node agent knows nothing of redirects (it never sets
``Join.accepts_redirect``), so the front door serves its session itself —
with a Python reference user bot that *does* follow redirects: a pair is
sent to a worker only when both of its bots accept. Real processes: ``vae
bridge serve --workers 2``, ``node bot.js``; the user bot runs in-process.
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import grpc

from tests.helpers import start_bridge
from tests.interop.conftest import start_run, watch_until_done
from tests.interop.test_node import SCENARIO, node_ready, run_node
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.recordings.read.reader import RecordingReader


async def test_the_node_agent_is_served_by_the_front_door_of_a_bridge_with_workers(
    tmp_path: Path,
) -> None:
    node = node_ready()
    db = tmp_path / "vae.db"
    bridge, address = await start_bridge(db, "127.0.0.1:0", 60, "--workers", "2")
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            run_id = await start_run(stub, [SCENARIO])
            user = BotConfig(address, "user", lambda: play_script, run_filter=run_id,
                             max_sessions=1)  # fmt: skip
            async with asyncio.timeout(90):
                events, (code, out), outcomes = await asyncio.gather(
                    watch_until_done(stub, run_id),
                    run_node(node, "bot.js", "--bridge", address, "--run", run_id,
                             "--sessions", "1", log=tmp_path / "node_bot.log"),
                    run_bots(user, asyncio.Event()),
                )  # fmt: skip
            got = (await stub.GetRun(bridge_pb2.GetRunRequest(run_id=run_id))).run
    finally:
        bridge.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(bridge.wait(), 60) == 0
    assert code == 0, (tmp_path / "node_bot.log").read_text()
    ((outcome),) = json.loads(out)["sessions"]
    assert (outcome["reason"], outcome["clean_exit"]) == ("STOP_REASON_END_TOOL", True)
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED and len(outcomes) == 1
    (summary,) = got.sessions
    assert summary.bridge.pid == bridge.pid and not summary.bridge.HasField("worker")
    assert summary.bridge.address == address
    with RecordingReader(db) as reader:
        (session,) = reader.sessions(run_id)
    assert session.agent_bot["name"] == "node-example-agent"
    assert (session.stop_reason, session.clean_exit) == ("end_tool", True)
