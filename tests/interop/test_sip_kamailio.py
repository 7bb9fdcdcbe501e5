"""Kamailio as proxy and registrar with digest authentication, in front of the agent.

The agent (SIPp) registers with Kamailio (answering its 401); vae calls
``sip:agent@<kamailio>`` with the run's credentials: Kamailio challenges the
INVITE (407), vae answers with Proxy-Authorization, Kamailio finds the agent's
registration and relays the call, staying in the path (Record-Route) for the
ACK and the BYE. With a wrong password Kamailio challenges again: the attempt
ends ``sip_auth_failed``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conftest import require_tool
from tests.interop import sipp_scenarios as sc
from tests.interop.conftest import ROOT
from tests.interop.sip_helpers import (
    _bound,
    assert_loopback_only,
    caller_scenario,
    free_udp_port,
    run_through,
    sipp,
)
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.recordings.read.reader import RecordingReader


@contextlib.asynccontextmanager
async def kamailio(tmp_path: Path) -> AsyncIterator[int]:
    port = free_udp_port()
    cfg = tmp_path / "kamailio.cfg"
    text = (ROOT / "tests/interop/kamailio.cfg").read_text()
    cfg.write_text(text.replace("children=1", f"children=1\nlisten=udp:127.0.0.1:{port}"))
    with (tmp_path / "kamailio.log").open("wb") as log:
        proc = await asyncio.create_subprocess_exec(
            "kamailio", "-f", str(cfg), "-DD", "-E", "-Y", str(tmp_path), stdout=log, stderr=log
        )
        try:
            await _bound(port)
            yield port
        finally:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), 10)


async def test_a_call_through_kamailio_with_digest_auth(
    tmp_path: Path, bridge: BridgeServer, bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
) -> None:  # fmt: skip
    require_tool("kamailio", "bash scripts/ci_setup_sip.sh")
    require_tool("sipp", "bash scripts/ci_setup_sip.sh")
    async with kamailio(tmp_path) as proxy:
        agent_port = free_udp_port()
        async with sipp(tmp_path, sc.register("agent"), "-au", "agent", "-ap", "agentpw",
                        port=agent_port, name="register",
                        client_to=f"127.0.0.1:{proxy}") as reg:  # fmt: skip
            assert await reg.finished() == 0, reg.messages()
        url = f"sip:agent@127.0.0.1:{proxy}"
        runs = {}
        for password in ("callerpw", "wrong"):
            async with sipp(tmp_path, sc.answer(), "-rtp_echo", port=agent_port,
                            name=f"agent_{password}") as far:  # fmt: skip
                agent = bridge_pb2.ConnectorConfig(kind="sip", url=url)
                agent.secrets.update({"sip_username": "caller", "sip_password": password})
                runs[password], _ = await run_through(
                    bridge, bridge_stub, [caller_scenario(f"via_proxy_{password}", 4)], agent
                )
                if password == "callerpw":
                    assert await far.finished() == 0, far.messages()  # INVITE, ACK, BYE relayed
                    relayed = far.messages()
    with RecordingReader(db_path) as r:
        (good,) = r.sessions(runs["callerpw"])
        (bad,) = r.sessions(runs["wrong"])
    assert good.stop_reason == "max_duration", good.stop_detail
    assert "Record-Route:" in relayed and "BYE sip:" in relayed
    assert bad.stop_reason == "sip_auth_failed" and "SIP 407 " in bad.stop_detail
    assert_loopback_only(relayed)


@pytest.fixture(autouse=True)
def _extra() -> None:
    pytest.importorskip("sipmessage", reason="pip install 'vae[sip]'")
