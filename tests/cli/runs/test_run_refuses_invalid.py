"""A typo in a reference bot's script or a tool effect is refused before a run starts.

``vae run`` checks the files itself and exits 2 listing every problem with its
file, position and field, without calling the bridge; the bridge's own
``StartRun`` refuses the same files (INVALID_ARGUMENT, every problem listed)
for clients that skip the CLI. Either way no run is recorded.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
import yaml
from click.testing import CliRunner

from tests.bridge_service.conftest import scenario
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.cli.main import vae
from vae.recordings.read.reader import RecordingReader
from vae.serving import client_channel


def _suite(tmp_path: Path) -> tuple[Path, Path, Path]:
    folder = tmp_path / "suite"
    folder.mkdir()
    script = scenario("script_typo")
    script["agent"]["script"] = [{"say": "Hello."}, {"sey": "Goodbye.", "end": True}]
    effect = scenario("effect_typo")
    effect["agent"]["tool_effects"] = {"book": [{"op": "apend", "path": "bookings"}]}
    a, b = folder / "a.yaml", folder / "b.yaml"
    a.write_text(yaml.safe_dump(script, sort_keys=False))
    b.write_text(yaml.safe_dump(effect, sort_keys=False))
    return folder, a, b


def _runs(db: Path) -> list[str]:
    with RecordingReader(db) as reader:
        return [r.run_id for r in reader.list_runs("", 0)]


async def test_vae_run_refuses_before_asking_the_bridge(
    bridge: BridgeServer, tmp_path: Path
) -> None:
    folder, a, b = _suite(tmp_path)
    result = await asyncio.to_thread(
        CliRunner().invoke, vae, ["run", str(folder), "--bridge", bridge.address]
    )
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert any(
        line.startswith(f"{a}:")
        and "agent.script[1].sey: unknown field; did you mean 'say'?" in line
        for line in lines
    ), result.stderr
    assert any(
        line.startswith(f"{b}:")
        and "agent.tool_effects.book[0].op: 'apend' is not one of" in line
        and "did you mean 'append'?" in line
        for line in lines
    ), result.stderr
    assert "2 problems in 2 files; no run started" in result.stderr
    assert result.stdout == ""
    assert _runs(bridge.db_path) == []


async def test_the_bridge_refuses_the_same_files_in_start_run(
    bridge: BridgeServer, tmp_path: Path
) -> None:
    folder, a, b = _suite(tmp_path)
    async with client_channel(bridge.address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.StartRun(
                bridge_pb2.StartRunRequest(sources=[bridge_pb2.ScenarioSource(path=str(folder))])
            )
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = info.value.details() or ""
    assert f"{a}:" in details and "agent.script[1].sey: unknown field" in details
    assert f"{b}:" in details and "agent.tool_effects.book[0].op: 'apend'" in details
    assert _runs(bridge.db_path) == []


@pytest.mark.parametrize("seed", ["-1", str(2**64)])
def test_a_seed_outside_uint64_is_a_usage_error(tmp_path: Path, seed: str) -> None:
    """The seed is a uint64 on the wire: refused by the option, never a traceback."""
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario("s")))
    # The bridge is never reached: the option is refused while parsing.
    args = ["run", str(path), "--bridge", "127.0.0.1:9", "--seed", seed]
    result = CliRunner().invoke(vae, args)
    assert result.exit_code == 2, result.output
    assert "--seed" in result.stderr and "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
