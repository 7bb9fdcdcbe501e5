"""`vae run --otel-endpoint`: the run's trace reaches the collector, with the verdicts when
the same command scored the run (gate options), from the bridge otherwise."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.bridge_service.bots import TestBot
from tests.cli.runs.test_run_gate import talk, write_suite
from tests.helpers import cli
from tests.otlp_collector import Collector
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2


async def run(bridge: BridgeServer, folder: Path, run_id: str, *extra: str) -> None:
    bots = [TestBot(bridge.address, role, talk)
            for role in (common_pb2.ROLE_USER, common_pb2.ROLE_AGENT)]  # fmt: skip
    (code, _, err), *_ = await asyncio.gather(
        cli("run", str(folder), "--bridge", bridge.address, "--db", str(bridge.db_path),
            "--run-id", run_id, *extra),
        *(b.run() for b in bots),
    )  # fmt: skip
    assert code == 0, err


async def test_run_exports_with_verdicts_when_gated_and_through_the_bridge_otherwise(
    bridge: BridgeServer, tmp_path: Path
) -> None:
    folder = write_suite(tmp_path / "suite", one={"success_signals": ["CLEAN_EXIT"]})
    with Collector("ok") as collector:
        await run(bridge, folder, "gated", "--no-judge", "--min-success", "1.0",
                  "--otel-endpoint", collector.endpoint)  # fmt: skip
        gated = list(collector.spans)
        collector.spans.clear()
        await run(bridge, folder, "plain", "--otel-endpoint", collector.endpoint)
        task = bridge.runs.runs["plain"].task  # type: ignore[union-attr]
        await asyncio.wait_for(asyncio.shield(task), 10)  # the bridge exports as the run ends
        plain = list(collector.spans)
    (session,) = [s for s in gated if s.name == "vae.session"]
    assert session.attributes["vae.verdict"] == "passed"
    assert [s.name for s in gated].count("vae.scoring") == 1
    assert any(name == "gen_ai.evaluation.result" for s in gated for name, _ in s.events)
    (session,) = [s for s in plain if s.name == "vae.session"]
    assert "vae.verdict" not in session.attributes  # not scored by that command
    assert {s.attributes.get("vae.run.id") for s in plain if s.name == "vae.run"} == {"plain"}
