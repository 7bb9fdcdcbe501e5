"""The WebRTC connector end to end; run only inside a network namespace (see test_webrtc.py).

ICE never offers 127.0.0.1, and these tests must send nothing to this
machine's other addresses, so ``tests/interop/test_webrtc.py`` runs this file
with pytest inside ``unshare -n`` where lo is up with 127.0.0.2 added: the
bridge, vae's WebRTC client, the pipecat bots and the fakes all live there,
and the only candidates are loopback ones (checked).

- the example pipecat bot served over SmallWebRTC (``webrtc_bot.py``) gives
  the same events and verdicts as the same bot over its websocket; its audio
  is recorded where it spoke; text turns go over the data channel;
- a bot sending garbage on the data channel ends only its own session;
- an offer answered with an HTTP error or garbage SDP, and ICE that never
  connects, end the attempt ``connector_failed`` within ``ice_timeout_s``.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers import free_port
from tests.interop.cli_flows import rescored, run_with_users, suite_of, verdicts
from tests.interop.conftest import (
    PIPECAT_BOT,
    require_pipecat_venv,
    start_run,
    subprocess_until_ready,
    watch_until_done,
)
from tests.interop.test_pipecat import SCENARIO
from tests.interop.webrtc_fakes import offer_server
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import Channel, EventKind, Side, Verdict
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore

pytestmark = pytest.mark.skipif(
    not os.environ.get("VAE_IN_NETNS"), reason="runs inside the namespace test_webrtc.py makes"
)
WEBRTC_BOT = PIPECAT_BOT.parent / "webrtc_bot.py"


@pytest.fixture
async def bots(tmp_path: Path) -> AsyncIterator[dict[str, str]]:
    """The example bot twice: over its websocket and over SmallWebRTC."""
    python = str(require_pipecat_venv())
    ws, http = free_port(), free_port()
    async with (
        subprocess_until_ready([python, str(PIPECAT_BOT), "--port", str(ws)], "READY",
                               tmp_path / "ws_bot.log"),
        subprocess_until_ready([python, str(WEBRTC_BOT), "--port", str(http)], "READY",
                               tmp_path / "webrtc_bot.log"),
    ):  # fmt: skip
        yield {
            "pipecat": f"ws://127.0.0.1:{ws}",
            "webrtc": f"webrtc+http://127.0.0.1:{http}/api/offer",
        }


def connector(kind: str, url: str, **options: Any) -> bridge_pb2.ConnectorConfig:
    return bridge_pb2.ConnectorConfig(kind=kind, url=url, options_json=json.dumps(options))


async def with_users(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub, runs: list[str]
) -> None:
    users = [
        run_bots(
            BotConfig(bridge.address, "user", lambda: play_script, run_filter=run, max_sessions=1),
            asyncio.Event(),
        )
        for run in runs
    ]
    async with asyncio.timeout(90):
        await asyncio.gather(*(watch_until_done(stub, run) for run in runs), *users)


def summary(r: RecordingReader, session_id: str) -> dict[str, Any]:
    """What must be the same over websocket and WebRTC."""
    agent = [e for e in r.events(session_id) if e.side is Side.AGENT]
    return {
        "kinds": {e.kind for e in agent if e.kind is not EventKind.LOG},
        "spoken": [e.payload["text"] for e in agent if e.kind is EventKind.TRANSCRIPT],
        "calls": [
            (e.payload["name"], e.payload["arguments"], e.payload["is_write"])
            for e in agent
            if e.kind is EventKind.TOOL_CALL
        ],
        "tokens": [e.payload["prompt_tokens"] for e in agent if e.kind is EventKind.TOKEN_USAGE],
        "state": r.final_states(session_id)[Side.AGENT].state,
    }


async def test_same_events_and_verdicts_as_over_websocket(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    bots: dict[str, str],
    db_path: Path,
) -> None:
    async with offer_server("garbage_rtvi") as garbage:
        targets = [("pipecat", "pipecat", bots["pipecat"]), ("webrtc", "webrtc", bots["webrtc"]),
                   ("garbage", "webrtc", garbage.url)]  # fmt: skip
        runs = {
            name: await start_run(bridge_stub, [SCENARIO], agent_connector=connector(kind, url))
            for name, kind, url in targets
        }
        await with_users(bridge, bridge_stub, list(runs.values()))
    with RecordingReader(db_path) as r:
        sessions = {kind: r.sessions(run)[0] for kind, run in runs.items()}
        ws, rtc = sessions["pipecat"], sessions["webrtc"]
        assert (ws.stop_reason, rtc.stop_reason) == ("end_tool", "end_tool")
        assert rtc.agent_bot["labels"]["connector"] == "webrtc"
        assert summary(r, ws.session_id) == summary(r, rtc.session_id)

        # The bot's 0.8 s answer is on the agent channel after the caller spoke, where
        # its speech_started said it began.
        agent = r.read_channel(rtc.session_id, Channel.AGENT)
        user = r.read_channel(rtc.session_id, Channel.USER)
        loud = np.flatnonzero(np.abs(agent.samples) > 3000)
        assert (loud[-1] - loud[0]) / agent.sample_rate == pytest.approx(0.8, abs=0.1)
        assert loud[0] > np.flatnonzero(np.abs(user.samples) > 1000)[0]
        events = r.events(rtc.session_id)
        tts = [e.payload for e in events if e.kind is EventKind.SPEECH_STARTED]
        starts = [p["sample_offset"] for p in tts if p.get("source") == "tts"]
        assert min(abs(s - loud[0]) for s in starts) / agent.sample_rate < 0.3, (starts, loud[0])

        # Loopback candidates only (127.0.0.2 here), on both sides.
        (connected,) = [e.payload for e in events if e.payload.get("message") == "webrtc connected"]
        addresses = connected["candidates"]["local"] + connected["candidates"]["remote"]
        assert addresses and all(a.startswith("127.") for a in addresses), addresses

        bad = sessions["garbage"]
        assert bad.stop_reason == "bot_error"
        assert "not a JSON object" in bad.stop_detail

    result = await rescore(db_path, runs["pipecat"], ScoringConfig())
    result_rtc = await rescore(db_path, runs["webrtc"], ScoringConfig())
    with RecordingReader(db_path) as r:
        verdicts = [
            {s.signal: s.verdict for s in r.scores(res.scoring.scoring_id, sess.session_id)}
            for res, sess in ((result, ws), (result_rtc, rtc))
        ]
    for signal in ("ACTION_MATCH", "DB_STATE_MATCH", "CLEAN_EXIT", "is_successful"):
        assert verdicts[0][signal] is verdicts[1][signal] is Verdict.PASSED, signal


async def test_text_turns_go_over_the_data_channel(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    bots: dict[str, str],
    db_path: Path,
) -> None:
    scenario = copy.deepcopy(SCENARIO)
    run = await start_run(bridge_stub, [scenario], modality=common_pb2.MODALITY_TEXT,
                          agent_connector=connector("webrtc", bots["webrtc"]))  # fmt: skip
    await with_users(bridge, bridge_stub, [run])
    with RecordingReader(db_path) as r:
        (session,) = r.sessions(run)
        assert session.stop_reason == "end_tool"
        assert r.session_mode(session.session_id).modality == "text"
        agent = [e for e in r.events(session.session_id) if e.side is Side.AGENT]
        said = [e.payload["text"] for e in agent if e.kind is EventKind.TRANSCRIPT]
        assert said == ["Your booking is done, goodbye."]


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        ("http_error", 'answered the offer with HTTP 500: {"detail": "the bot is out of'),
        ("garbage_sdp", "answered the offer with an SDP vae cannot use"),
        ("no_ice", "did not connect within ice_timeout_s (2 s"),
    ],
)
async def test_a_refused_offer_or_dead_ice_ends_the_attempt_in_time(
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub, db_path: Path, mode: str, problem: str
) -> None:
    async with offer_server(mode) as server:
        t0 = time.monotonic()
        agent = connector("webrtc", server.url, ice_timeout_s=2)
        run = await start_run(bridge_stub, [SCENARIO], agent_connector=agent)
        async with asyncio.timeout(30):
            await watch_until_done(bridge_stub, run)
        elapsed = time.monotonic() - t0
    with RecordingReader(db_path) as r:
        (session,) = r.sessions(run)
    assert session.stop_reason == "connector_failed"
    assert problem in session.stop_detail, session.stop_detail
    assert elapsed < 2 + 3  # within the ICE timeout, never the pool's 30 s of retries


async def test_the_documented_webrtc_commands(
    bridge: BridgeServer, bots: dict[str, str], tmp_path: Path, db_path: Path
) -> None:
    """docs/interop.md's commands: vae run on the example suite, then vae rescore."""
    suite = suite_of(tmp_path, "restaurant_book_table", "retail_return_item")
    code, out, err = await run_with_users(
        bridge.address,
        [str(suite), "--first-speaker", "user", "--agent-connector", bots["webrtc"],
         "--connector-capacity", "4"],
        concurrency=2,
        timeout_s=120,
    )  # fmt: skip
    assert code == 0, err
    run = json.loads(out)
    assert run["status"] == "completed" and run["scenarios_done"] == 2
    _, sessions, err = await rescored(run["run_id"], db_path)
    assert len(sessions) == 2, err
    for session in sessions:
        found = verdicts(session)
        assert found["CLEAN_EXIT"] == "passed", session
        assert found["is_successful"] in ("passed", "failed"), session  # a verdict, scored
