"""A real pipecat pipeline (pipecat-ai from PyPI, its own venv) evaluated through the bridge.

The agent is ``examples/pipecat_bot`` — WebSocket server transport, protobuf
serializer, RTVI — dialled by the bridge's pipecat connector; the user is the
Python reference bot speaking gRPC. The session's audio and events are
recorded and it scores.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import free_port
from tests.interop.conftest import (
    PIPECAT_BOT,
    require_pipecat_venv,
    start_run,
    subprocess_until_ready,
    watch_until_done,
)
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.connectors.base import (
    ConnectorConfig,
    FinalStatePart,
    SessionEndingOut,
    SessionStartInfo,
)
from vae.bridge_service.connectors.pipecat.connector import PipecatEndpoint, dial
from vae.bridge_service.server import BridgeServer
from vae.recordings.models import Channel, EventKind, SessionStatus, Side, Verdict
from vae.recordings.models import Side as RecSide
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore

BOOKING = {"confirmed": True, "answers": 1}
SCENARIO = {
    "name": "pipecat_booking",
    "domain": "restaurant",
    "max_duration": 30,
    "user": {
        "persona": {"name": "Ann"},
        "task": {"goal": "book a table"},
        "speaks_first": True,
        "script": [{"say": "Hello, I would like to book a table for two people tonight."}],
    },
    "agent": {
        "persona": {"role": "host"},
        "resources": {"tools": {"book_table": {"confirmed": "whether it is booked"}}},
    },
    "initial_state": {"bookings": []},
    "expected_scenario_db": {"bookings": [BOOKING]},
    "reference_answer": {"type": "book_table", "args": {"confirmed": True}},
    "success_signals": ["ACTION_MATCH", "DB_STATE_MATCH", "CLEAN_EXIT"],
}


async def test_pipecat_bot_session_recorded_and_scored(
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    pipecat_bot: str,
    db_path: Path,
) -> None:
    connector = bridge_pb2.ConnectorConfig(kind="pipecat", url=pipecat_bot, options_json="{}")
    run_id = await start_run(bridge_stub, [SCENARIO], agent_connector=connector)
    stop = asyncio.Event()
    user = BotConfig(bridge.address, "user", lambda: play_script, run_filter=run_id, max_sessions=1)
    async with asyncio.timeout(60):
        events, outcomes = await asyncio.gather(
            watch_until_done(bridge_stub, run_id), run_bots(user, stop)
        )
    assert events[-1].kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED
    assert len(outcomes) == 1

    with RecordingReader(db_path) as r:
        (session,) = r.sessions(run_id)
        assert session.status is SessionStatus.ENDED
        assert (session.stop_reason, session.clean_exit) == ("end_tool", True)
        assert session.agent_bot["name"] == "pipecat-ai"
        assert session.agent_bot["labels"]["connector"] == "pipecat"
        # The bot's 24 kHz frames were resampled to the connector's 16 kHz send rate.
        agent = r.read_channel(session.session_id, Channel.AGENT)
        user_audio = r.read_channel(session.session_id, Channel.USER)
        assert agent.sample_rate == 16000
        loud = np.flatnonzero(np.abs(agent.samples) > 3000)
        assert (loud[-1] - loud[0]) / 16000 == pytest.approx(0.8, abs=0.05)  # one 0.8 s answer
        user_loud = np.flatnonzero(np.abs(user_audio.samples) > 1000)
        assert loud[0] > user_loud[0]  # it answered after the caller spoke
        evs = r.events(session.session_id)
        agent_events = [e for e in evs if e.side is Side.AGENT]
        kinds = {e.kind for e in agent_events}
        assert {
            EventKind.TRANSCRIPT,
            EventKind.SPEECH_STARTED,
            EventKind.SPEECH_STOPPED,
            EventKind.TOKEN_USAGE,
            EventKind.METRIC,
            EventKind.TOOL_CALL,
            EventKind.END_CONVERSATION,
        } <= kinds
        spoken = [e.payload["text"] for e in agent_events if e.kind is EventKind.TRANSCRIPT]
        assert spoken == ["Your booking is done, goodbye."]
        writes = [
            e.payload
            for e in agent_events
            if e.kind is EventKind.TOOL_CALL and e.payload["is_write"]
        ]
        assert [(w["name"], w["arguments"]) for w in writes] == [("book_table", BOOKING)]
        tokens = [e.payload for e in agent_events if e.kind is EventKind.TOKEN_USAGE]
        assert tokens[0]["prompt_tokens"] == 101
        ttfb = [e.payload for e in agent_events if e.kind is EventKind.METRIC]
        assert ttfb[0]["name"] == "ttfb" and ttfb[0]["value"] == pytest.approx(0.05)
        final = r.final_states(session.session_id)[RecSide.AGENT]
        assert final.state == {"bookings": [BOOKING]}
        assert final.context[0] == {"role": "system", "content": final.context[0]["content"]}
        assert "host" in final.context[0]["content"]  # the scenario's prompt reached the bot

    result = await rescore(db_path, run_id, ScoringConfig())
    with RecordingReader(db_path) as r:
        scores = {s.signal: s for s in r.scores(result.scoring.scoring_id, session.session_id)}
    for signal in ("ACTION_MATCH", "DB_STATE_MATCH", "CLEAN_EXIT", "is_successful"):
        assert scores[signal].verdict is Verdict.PASSED, (signal, scores[signal].detail)


async def test_connector_against_the_bot_directly(pipecat_bot: str) -> None:
    """Handshake, prompt, id-matched responses and final state, without the bridge."""
    endpoint = await dial(ConnectorConfig("pipecat", pipecat_bot, {}), Side.AGENT)
    assert endpoint.bot.labels["rtvi_version"]
    start = SessionStartInfo(
        "r",
        "s",
        "sc",
        1,
        Side.AGENT,
        "shop",
        "Be brief.",
        {"book_table": {}},
        {"vip": True},
        [],
        {},
        10_000,
        False,
        16000,
    )
    got: list[object] = []

    async def read(endpoint: PipecatEndpoint) -> None:
        async for item in endpoint.receive():
            got.append(item)
            if getattr(item, "done", False):
                return

    async with asyncio.timeout(20), asyncio.TaskGroup() as tg:
        reader = tg.create_task(read(endpoint))
        assert await endpoint.send(start)
        assert await endpoint.send(SessionEndingOut("cancelled", "", 5000))
        await reader
    await endpoint.close()
    logs = [getattr(i, "payload", {}).get("message") for i in got]
    assert "prompt acknowledged" in logs and "initialization acknowledged" in logs
    final = got[-1]
    state = json.loads(final.state.data)  # type: ignore[attr-defined]
    context = json.loads(final.context.data)  # type: ignore[attr-defined]
    assert state == {"vip": True}
    assert context == [{"role": "system", "content": "Be brief."}]

    # The same bot serves the next session; with nothing to fetch the final state
    # is empty but complete as soon as the session ends.
    options = {"fetch_summary": False, "fetch_context": False}
    second = await dial(ConnectorConfig("pipecat", pipecat_bot, options), Side.AGENT)
    got.clear()
    async with asyncio.timeout(20), asyncio.TaskGroup() as tg:
        reader = tg.create_task(read(second))
        assert await second.send(start)
        assert await second.send(SessionEndingOut("cancelled", "", 5000))
        await reader
    await second.close()
    assert got[-1] == FinalStatePart(None, None, done=True)


async def test_dialling_nothing_fails_clearly() -> None:
    from tests.helpers import free_port
    from vae.bridge_service.connectors.base import ConnectorError

    url = f"ws://127.0.0.1:{free_port()}"
    with pytest.raises(ConnectorError, match="cannot reach pipecat bot"):
        await dial(ConnectorConfig("pipecat", url, {"connect_retries": 2}), Side.AGENT)
    with pytest.raises(ConnectorError, match="unknown option 'bogus'"):
        await dial(ConnectorConfig("pipecat", url, {"bogus": 1}), Side.AGENT)
    with pytest.raises(ConnectorError, match="ws://"):
        await dial(ConnectorConfig("pipecat", "http://x", {}), Side.AGENT)


async def test_connect_timeout_bounds_a_refusing_pipecat_endpoint() -> None:
    """Only the pool retries a refused dial: connect_timeout_s is the bound, not 5 x backoff."""
    from tests.interop.conftest import free_port
    from vae.bridge_service.connectors.base import ConnectorError
    from vae.bridge_service.connectors.pool import ConnectorPools

    url = f"ws://127.0.0.1:{free_port()}"
    config = ConnectorConfig("pipecat", url, {}, connect_timeout_s=1.0)
    t0 = time.monotonic()
    with pytest.raises(ConnectorError, match="within 1 s of retries"):
        await ConnectorPools().dial(config, Side.AGENT)
    assert time.monotonic() - t0 < 2.0  # the pool's 1 s (it measured 6.3 s with 5 tries)


async def test_bot_that_dies_mid_call_ends_the_stream(
    pipecat_bot_process: tuple[str, asyncio.subprocess.Process],
) -> None:
    url, proc = pipecat_bot_process
    endpoint = await dial(ConnectorConfig("pipecat", url, {}), Side.USER)
    got: list[object] = []

    async def read() -> None:
        async for item in endpoint.receive():
            got.append(item)

    async with asyncio.timeout(20), asyncio.TaskGroup() as tg:
        reader = tg.create_task(read())
        start = SessionStartInfo(
            "r", "s", "sc", 1, Side.USER, "d", "p", {}, {}, [], {}, 10_000, False, 16000
        )
        await endpoint.send(start)
        proc.kill()
        await reader  # the bot's socket closed: receive() returns, no exception
    await endpoint.close()
    assert await proc.wait() != 0
    assert not any(getattr(item, "done", False) for item in got)  # no final state was invented


async def test_a_pipecat_agent_reports_what_it_heard(
    tmp_path: Path, bridge: BridgeServer, bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
) -> None:  # fmt: skip
    """pipecat's own ``user-transcription`` (a TranscriptionFrame through its RTVI observer)
    arrives as heard: HEARD_CORRECTLY is decided from pipecat's reports, and a misheard
    party size fails it."""
    said = SCENARIO["user"]["script"][0]["say"]  # type: ignore[index]
    heard = "hello I would like to book a table for 3 people tonight"
    port = free_port()
    args = [str(require_pipecat_venv()), str(PIPECAT_BOT), "--port", str(port),
            "--transcribe-as", heard]  # fmt: skip
    async with subprocess_until_ready(args, "READY", tmp_path / "pipecat_heard.log"):
        connector = bridge_pb2.ConnectorConfig(kind="pipecat", url=f"ws://127.0.0.1:{port}")
        run_id = await start_run(bridge_stub, [SCENARIO], agent_connector=connector)
        user = BotConfig(
            bridge.address, "user", lambda: play_script, run_filter=run_id, max_sessions=1
        )
        async with asyncio.timeout(60):
            await asyncio.gather(
                watch_until_done(bridge_stub, run_id), run_bots(user, asyncio.Event())
            )
    with RecordingReader(db_path) as r:
        (session,) = r.sessions(run_id)
        reported = [
            e.payload for e in r.events(session.session_id, [EventKind.TRANSCRIPT])
            if e.side is Side.AGENT and e.payload["kind"] == "heard"
        ]  # fmt: skip
    assert [(p["text"], p["is_final"]) for p in reported] == [(heard, True)]
    result = await rescore(db_path, run_id, ScoringConfig())
    scores = {s.signal: s for s in result.sessions[0].scores}
    verdict = scores["HEARD_CORRECTLY"]
    assert verdict.detail["heard_source"] == "bots" and verdict.detail["said_source"] == "bots"
    assert verdict.verdict is Verdict.FAILED  # "two" said, "3" heard: a critical mismatch
    (m,) = verdict.detail["mismatches"]
    assert (m["said"], m["heard"]) == ("two", "3")
    assert verdict.value == pytest.approx(1 - 1 / 12)  # one substitution in 12 words
    assert verdict.detail["turns"][0]["said"] == said
