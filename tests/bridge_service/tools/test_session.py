"""Asking for a tool backend: refused clearly without the tools extra; the agent told where."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import grpc
import pytest

from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.config import BridgeSettings, RunSettings
from vae.bridge_service.server import BridgeServer
from vae.bridge_service.session.plan import SessionPlan, start_info
from vae.bridge_service.tools.session import ToolBackendUnavailable, check_run, missing_extra
from vae.recordings.models import Side
from vae.recordings.read.reader import RecordingReader
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.tools.client import BackendAddresses

DOC = {"name": "s", "agent": {"resources": {"tools": {"book": {"date": "day"}}}}}


def test_without_the_extra_a_run_asking_for_a_backend_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plain, asking = scenario_from_dict(DOC), scenario_from_dict({**DOC, "tool_backend": True})
    check_run(RunSettings(tool_backend=True), [plain])  # the extra is installed here
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if it were not
    assert "pip install 'vae[tools]'" in missing_extra() and "mcp" in missing_extra()
    check_run(RunSettings(), [plain])  # nobody asks: fine
    with pytest.raises(ToolBackendUnavailable, match=r"options\.tool_backend: .*vae\[tools\]"):
        check_run(RunSettings(tool_backend=True), [plain])
    with pytest.raises(ToolBackendUnavailable, match=r"^tool_backend: .*vae\[tools\]"):
        check_run(RunSettings(), [plain, asking])


async def test_start_run_says_which_extra_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    settings = BridgeSettings(address="127.0.0.1:0")
    request = bridge_pb2.StartRunRequest(
        sources=[bridge_pb2.ScenarioSource(inline=json.dumps([DOC]))],
        options=bridge_pb2.RunOptions(tool_backend=True),
    )
    async with (
        BridgeServer(tmp_path / "vae.db", settings) as server,
        grpc.aio.insecure_channel(server.address) as channel,
    ):
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.StartRun(request)
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "pip install 'vae[tools]'" in str(caught.value.details())
    with RecordingReader(tmp_path / "vae.db") as reader:
        assert reader.run_ids() == []  # nothing was started


def test_only_the_agent_is_told_where_the_backend_is() -> None:
    sc = scenario_from_dict(DOC)
    plan = SessionPlan("r", "sid", sc, 1, RunSettings(), BridgeSettings())
    at = BackendAddresses.at("http://127.0.0.1:5")
    assert start_info(plan, Side.AGENT, 16000, None, at).tool_backend == at
    assert start_info(plan, Side.USER, 16000, None, at).tool_backend is None
    assert at.openapi_url == "http://127.0.0.1:5/openapi.json"
    assert at.mcp_url == "http://127.0.0.1:5/mcp"
    assert at.tool_url("a/b") == "http://127.0.0.1:5/tools/a%2Fb"
