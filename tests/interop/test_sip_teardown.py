"""No call leg outlives its run: a cancelled run CANCELs a ringing call and hangs up an
answered one, and a bridge stopped with SIGTERM hangs up the calls it holds.

SIPp is the far end; its verdict (exit code 0: every message it expected came,
CANCEL or BYE included) is the proof that the leg was torn down.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import grpc
import pytest

from tests.conftest import require_tool
from tests.interop import sipp_scenarios as sc
from tests.interop.conftest import start_run, subprocess_until_ready
from tests.interop.sip_helpers import Sipp, caller_scenario, free_udp_port, sipp
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.recordings.read.reader import RecordingReader


@pytest.fixture(autouse=True)
def _sipp() -> None:
    require_tool("sipp", "bash scripts/ci_setup_sip.sh")


async def seen(far: Sipp, text: str, within_s: float = 15.0) -> None:
    """Wait until SIPp's trace holds ``text`` (polled, bounded)."""
    for _ in range(int(within_s / 0.05)):
        if text in far.messages():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{text!r} never showed in SIPp's trace:\n{far.messages()}")


async def started(stub: bridge_pb2_grpc.BridgeServiceStub, run_id: str) -> None:
    """Return once the run's session has started (the call answered, the caller joined)."""
    watch = stub.WatchRun(bridge_pb2.WatchRunRequest(run_id=run_id))
    async with asyncio.timeout(30):
        async for event in watch:
            if event.kind == bridge_pb2.RUN_EVENT_KIND_SESSION_STARTED:
                watch.cancel()
                return
    raise AssertionError("the session never started")


@pytest.mark.parametrize(("far_end", "teardown"), [("ringing", "CANCEL"), ("answered", "BYE")])
async def test_a_cancelled_run_tears_its_call_down(
    tmp_path: Path, bridge: BridgeServer, bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    far_end: str, teardown: str,
) -> None:  # fmt: skip
    text = sc.no_answer() if far_end == "ringing" else sc.answer()
    async with sipp(tmp_path, text, "-rtp_echo") as far:
        agent = bridge_pb2.ConnectorConfig(kind="sip", url=far.uri,
                                           options_json='{"ring_timeout_s": 60}')  # fmt: skip
        run_id = await start_run(bridge_stub, [caller_scenario("cancel_me", 60)],
                                 agent_connector=agent)  # fmt: skip
        stop = asyncio.Event()
        user = BotConfig(bridge.address, "user", lambda: play_script, run_filter=run_id)
        async with asyncio.TaskGroup() as tg:
            tg.create_task(run_bots(user, stop))
            await seen(far, "SIP/2.0 180 Ringing" if far_end == "ringing" else "ACK sip:")
            await bridge_stub.CancelRun(bridge_pb2.CancelRunRequest(run_id=run_id))
            assert await far.finished() == 0, far.messages()
            stop.set()
    assert f"{teardown} sip:" in far.messages()


async def test_sigterm_of_the_bridge_hangs_up_its_calls(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    port = free_udp_port()
    args = [sys.executable, "-m", "vae.cli.main", "bridge", "serve", "--db", str(db),
            "--address", f"127.0.0.1:{port}"]  # fmt: skip
    async with (
        sipp(tmp_path, sc.answer(), "-rtp_echo") as far,
        subprocess_until_ready(args, "vae bridge listening", tmp_path / "bridge.log") as proc,
    ):
        address = f"127.0.0.1:{port}"
        async with grpc.aio.insecure_channel(address) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            agent = bridge_pb2.ConnectorConfig(kind="sip", url=far.uri)
            run_id = await start_run(stub, [caller_scenario("term_me", 60)],
                                     agent_connector=agent)  # fmt: skip
            stop = asyncio.Event()
            user = BotConfig(address, "user", lambda: play_script, run_filter=run_id,
                             give_up_after_s=1)  # fmt: skip
            async with asyncio.TaskGroup() as tg:
                bots = tg.create_task(run_bots(user, stop))
                await started(stub, run_id)
                proc.send_signal(signal.SIGTERM)
                assert await far.finished() == 0, far.messages()  # the BYE came
                assert await asyncio.wait_for(proc.wait(), 30) == 0
                stop.set()
                bots.cancel()
    with RecordingReader(db) as r:
        (s,) = r.sessions(run_id)
    assert s.stop_reason == "shutdown"
    assert "BYE sip:" in far.messages()
