"""Wrong connector options are refused at StartRun, before any session is attempted.

They used to surface only at the first dial, as ``connector_failed`` on every
attempt (auto-retried) — a run that could never start, reported as a run
whose bot failed.
"""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest

from tests.bridge_service.conftest import scenario, start_run
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.connectors import registry
from vae.bridge_service.connectors.base import (
    ConnectorConfig,
    ConnectorOptionsError,
    check_connector,
    register_connector,
)
from vae.bridge_service.connectors.fake import dial as fake_dial
from vae.bridge_service.server import BridgeServer


@pytest.mark.parametrize(
    ("kind", "url", "options", "problem"),
    [
        ("twilio", "twilio+ws://127.0.0.1:9/ws", {"bogus": 1}, "unknown option 'bogus'"),
        ("twilio", "twilio+ws://127.0.0.1:9/ws", {"media_ms": "20"}, "'media_ms' must be an int"),
        ("twilio", "http://127.0.0.1:9/ws", {}, "twilio+ws://"),
        ("pipecat", "ws://127.0.0.1:9", {"prompt_message": "shout"}, "prompt_message must be"),
        ("pipecat", "http://127.0.0.1:9", {}, "ws:// or wss://"),
        ("nosuch", "x://y", {}, "unknown connector kind 'nosuch'"),
    ],
)
async def test_wrong_connector_options_are_invalid_argument_at_start_run(
    bridge: BridgeServer,
    stub: bridge_pb2_grpc.BridgeServiceStub,
    kind: str,
    url: str,
    options: dict[str, Any],
    problem: str,
) -> None:
    agent = bridge_pb2.ConnectorConfig(kind=kind, url=url, options_json=json.dumps(options))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await start_run(stub, [scenario()], agent_connector=agent)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "options.agent_connector" in str(err.value.details())
    assert problem in str(err.value.details()), err.value.details()
    listed = await stub.ListRuns(bridge_pb2.ListRunsRequest())
    assert not listed.runs  # no run, no attempt


def test_every_url_of_a_pool_is_checked() -> None:
    config = ConnectorConfig("pipecat", "ws://127.0.0.1:9", {}, ["wss://h:1", "tcp://h:2"])
    with pytest.raises(ConnectorOptionsError, match="tcp://h:2"):
        check_connector(config)


def test_a_registered_kind_brings_its_own_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_registry", dict(registry._registry))  # leave no kind behind
    monkeypatch.setattr(registry, "_checks", dict(registry._checks))
    seen: list[ConnectorConfig] = []

    def check(config: ConnectorConfig) -> None:
        seen.append(config)
        if config.options.get("loud"):
            raise ConnectorOptionsError("checked connector: loud is not allowed")

    register_connector("checked", fake_dial, check=check)
    check_connector(ConnectorConfig("checked", "fake://x", {}))
    with pytest.raises(ConnectorOptionsError, match="loud"):
        check_connector(ConnectorConfig("checked", "fake://x", {"loud": True}))
    assert len(seen) == 2
