"""StartRun refuses a broken scenario source before anything is recorded."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
import yaml

from tests.bridge_service.conftest import scenario
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc


async def test_invalid_source_fails_before_anything_starts(
    stub: bridge_pb2_grpc.BridgeServiceStub, tmp_path: Path
) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(scenario("good")))
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump({"name": "b", "success_signals": ["VIBES"]}))
    request = bridge_pb2.StartRunRequest(
        sources=[
            bridge_pb2.ScenarioSource(path=str(good)),
            bridge_pb2.ScenarioSource(path=str(broken)),
        ]
    )
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await stub.StartRun(request)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = exc.value.details() or ""
    assert str(broken) in details and "success_signals" in details and "VIBES" in details
    assert (await stub.ListRuns(bridge_pb2.ListRunsRequest())).runs == []
