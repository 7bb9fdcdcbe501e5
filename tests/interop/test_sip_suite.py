"""The example suite over SIP, end to end, against vae's reference agent: same verdicts as gRPC.

The agent is ``vae bot agent --sip-listen`` (a subprocess, the command a user
runs); the bridge calls it (``--agent-connector sip:agent@127.0.0.1:PORT``)
once per session, with the session's control messages in SIP INFO and the
audio as G.711 RTP both ways (keys as RFC 4733 events). The same scenarios
run over gRPC with the same scripted bots, both runs are scored without a
judge, and each scenario must end with the same stop reason and the same
``is_successful`` verdict.

CI runs a subset covering each kind of outcome (a pass, a DB mismatch, a
wrong action, keys, a caller hanging up, a voicemail); the whole suite runs
with ``VAE_SIP_FULL_SUITE=1`` (docs/interop.md gives the command).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import require_tool
from tests.interop.conftest import ROOT, start_run, subprocess_until_ready, watch_until_done
from tests.interop.sip_helpers import free_udp_port
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore

SUITE = ROOT / "examples" / "suite"
SUBSET = [
    "restaurant_book_table",
    "retail_exchange_db_mismatch",
    "airline_wrong_date",
    "bank_balance_keypad",
    "restaurant_hang_up",
    "outbound_voicemail_message",
]


def scenarios() -> list[dict[str, Any]]:
    names = sorted(p.stem for p in SUITE.glob("*.yaml"))
    if os.environ.get("VAE_SIP_FULL_SUITE") != "1":
        names = [n for n in names if n in SUBSET]
    return [yaml.safe_load((SUITE / f"{n}.yaml").read_text()) for n in names]


def options(n: int, agent: bridge_pb2.ConnectorConfig | None) -> dict[str, Any]:
    """The demo's run options (cli/demo/demo_wire.py), all sessions at once."""
    out: dict[str, Any] = dict(
        concurrency=min(n, 6), inactivity_timeout_s=4.0, min_agent_turns=2,
        max_auto_retries=1, auto_retry_backoff_s=0.5, pairing_timeout_s=60, seed=7,
        share_transcripts=True,
    )  # fmt: skip
    if agent is not None:
        out["agent_connector"] = agent
    return out


async def run_suite(
    bridge: BridgeServer,
    stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
    docs: list[dict[str, Any]],
    agent: bridge_pb2.ConnectorConfig | None,
) -> dict[str, tuple[str, str]]:
    """Scenario -> (stop reason, is_successful) of the run's last attempts, scored offline."""
    run_id = await start_run(stub, docs, **options(len(docs), agent))
    stop = asyncio.Event()
    roles = ["user"] if agent is not None else ["user", "agent"]
    async with asyncio.timeout(300), asyncio.TaskGroup() as tg:
        for role in roles:
            config = BotConfig(bridge.address, role, lambda: play_script, run_filter=run_id,
                               concurrency=min(len(docs), 6))  # fmt: skip
            tg.create_task(run_bots(config, stop))
        await watch_until_done(stub, run_id)
        stop.set()
    result = await rescore(db_path, run_id, ScoringConfig(no_judge=True))
    out: dict[str, tuple[str, str]] = {}
    with RecordingReader(db_path) as r:
        for s in r.sessions(run_id):
            if s.superseded_reason:
                continue
            scores = {x.signal: x for x in r.scores(result.scoring.scoring_id, s.session_id)}
            if agent is not None:
                assert s.agent_bot["labels"]["connector"] == "sip", s.agent_bot
            out[s.scenario_name] = (s.stop_reason, str(scores["is_successful"].verdict))
    return out


async def test_the_example_suite_over_sip_gives_the_grpc_verdicts(
    tmp_path: Path,
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
) -> None:
    require_tool("sipp", "bash scripts/ci_setup_sip.sh")  # the sip extra comes with it
    docs = scenarios()
    port = free_udp_port()
    args = [sys.executable, "-m", "vae.cli.main", "bot", "agent",
            "--sip-listen", f"127.0.0.1:{port}", "--log-level", "info"]  # fmt: skip
    async with subprocess_until_ready(args, "SIP sip:agent@127.0.0.1", tmp_path / "agent.log"):
        agent = bridge_pb2.ConnectorConfig(kind="sip", url=f"sip:agent@127.0.0.1:{port}")
        over_sip = await run_suite(bridge, bridge_stub, db_path, docs, agent)
    over_grpc = await run_suite(bridge, bridge_stub, db_path, docs, None)
    print("\n".join(f"{n}: grpc {over_grpc[n]} sip {over_sip.get(n)}" for n in sorted(over_grpc)))
    assert set(over_grpc) == {d["name"] for d in docs}
    assert over_sip == over_grpc
    # The subset covers passes and failures both ways, so equality says something.
    verdicts = {v for _, v in over_grpc.values()}
    assert {"passed", "failed"} <= verdicts, over_grpc


@pytest.fixture(autouse=True)
def _needs_the_sip_extra() -> None:
    pytest.importorskip("sipmessage", reason="pip install 'vae[sip]' (scripts/ci_setup_sip.sh)")
