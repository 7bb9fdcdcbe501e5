"""Recording a run with the reference bots, replaying it, and reading both back.

Everything is real: a bridge on 127.0.0.1:0 over a real SQLite file, the
scripted reference bots as in-process gRPC clients (the deterministic buzz
voice), the scorer's own rescore function. The replayed run gets only an
agent bot: the bridge plays the user side from the recording.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import numpy as np

from vae.bots.brains.conversation import Conversation
from vae.bots.brains.scripted import play_script
from vae.bots.client import Brain
from vae.bots.runner import BotConfig, run_bots
from vae.bots.sound.speech import BuzzSynthesiser
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.recordings.models import Channel, EventKind, Side
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore


def conversation(name: str = "booking", **fields: Any) -> dict[str, Any]:
    """A short scripted call: greeting, a request, a tool call, goodbyes."""
    doc: dict[str, Any] = {
        "name": name,
        "domain": "airline",
        "max_duration": 40,
        "user": {
            "persona": {"name": "Tom"},
            "script": [{"say": "Move booking one to March twenty."}, {"say": "Thanks, bye."}],
        },
        "agent": {
            "persona": {"role": "agent"},
            "resources": {"tools": {"change_flight": {"booking_id": "id", "new_date": "date"}}},
            "tool_effects": {
                "change_flight": [
                    {"op": "set", "path": "bookings.{booking_id}.date", "value": "$args.new_date"}
                ]
            },
            "script": agent_script("2026-03-20"),
        },
        "initial_state": {"bookings": {"B1": {"date": "2026-03-18"}}},
        "expected_scenario_db": {"bookings": {"B1": {"date": "2026-03-20"}}},
        "reference_answer": {"tool": "change_flight", "booking_id": "B1", "new_date": "2026-03-20"},
        "success_signals": ["ACTION_MATCH", "DB_STATE_MATCH", "CLEAN_EXIT"],
    }
    doc.update(fields)
    return doc


def agent_script(date: str) -> list[dict[str, Any]]:
    return [
        {"say": "Hello, how can I help?"},
        {
            "tool_calls": [
                {"name": "change_flight", "arguments": {"booking_id": "B1", "new_date": date}}
            ],
            "say": "Done, it is moved.",
        },
        {"say": "Goodbye.", "end": True},
    ]


def with_script(script: list[dict[str, Any]], **side: Any) -> Callable[[], Brain]:
    """An agent brain that plays ``script`` instead of the scenario's: "agent v2"."""

    async def brain(conv: Conversation) -> None:
        conv.info.side_config = {**conv.info.side_config, "script": script, **side}
        await play_script(conv)

    return lambda: brain


async def _bots_and_watch(
    server: BridgeServer,
    request: bridge_pb2.StartRunRequest,
    brains: dict[str, Callable[[], Brain]],
    concurrency: int,
    timeout_s: float,
) -> str:
    stop = asyncio.Event()
    async with asyncio.timeout(timeout_s), asyncio.TaskGroup() as tg:
        for role, brain in brains.items():
            config = BotConfig(
                server.address, role, brain, concurrency=concurrency,
                synth=BuzzSynthesiser(), run_filter=request.run_id,
            )  # fmt: skip
            tg.create_task(run_bots(config, stop))
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = bridge_pb2_grpc.BridgeServiceStub(channel)
                await stub.StartRun(request)
                watch = bridge_pb2.WatchRunRequest(run_id=request.run_id)
                async for event in stub.WatchRun(watch):
                    if event.kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED:
                        break
        finally:
            stop.set()
    return request.run_id


def _options(n: int, **options: Any) -> bridge_pb2.RunOptions:
    options.setdefault("inactivity_timeout_s", 6)
    options.setdefault("max_auto_retries", 0)
    return bridge_pb2.RunOptions(concurrency=n, **options)


async def record(
    server: BridgeServer,
    scenarios: list[dict[str, Any]],
    *,
    agent: Callable[[], Brain] = lambda: play_script,
    timeout_s: float = 90.0,
    concurrency: int = 0,
    **options: Any,
) -> str:
    run_id = f"rec-{uuid.uuid4().hex[:8]}"
    n = concurrency or len(scenarios)
    request = bridge_pb2.StartRunRequest(
        run_id=run_id,
        sources=[bridge_pb2.ScenarioSource(inline=json.dumps(scenarios))],
        options=_options(n, **options),
    )
    brains = {"user": lambda: play_script, "agent": agent}
    return await _bots_and_watch(server, request, brains, n, timeout_s)


async def replay(
    server: BridgeServer,
    source_run: str,
    *,
    agent: Callable[[], Brain] | None = lambda: play_script,
    scenarios: int = 1,
    timeout_s: float = 90.0,
    replay_scenarios: tuple[str, ...] = (),
    **options: Any,
) -> str:
    run_id = f"rep-{uuid.uuid4().hex[:8]}"
    request = bridge_pb2.StartRunRequest(
        run_id=run_id,
        replay=source_run,
        replay_scenarios=list(replay_scenarios),
        options=_options(scenarios, **options),
    )
    brains = {} if agent is None else {"agent": agent}
    return await _bots_and_watch(server, request, brains, scenarios, timeout_s)


async def resume(
    server: BridgeServer,
    run_id: str,
    *,
    agent: Callable[[], Brain] = lambda: play_script,
    timeout_s: float = 90.0,
) -> str:
    request = bridge_pb2.StartRunRequest(run_id=run_id, resume=run_id)
    return await _bots_and_watch(server, request, {"agent": agent}, 1, timeout_s)


def session_of(db: Path, run_id: str, scenario: str) -> str:
    with RecordingReader(db) as reader:
        return reader.latest_attempts(run_id)[scenario].session_id


def sent_stream(db: Path, session_id: str, channel: Channel = Channel.USER) -> np.ndarray:
    """A channel on its sender's own sample clock: index = sample offset as sent."""
    with RecordingReader(db) as reader:
        segs = reader.segments(session_id, channel)
    end = max((s.start_offset + s.sample_count for s in segs), default=0)
    out = np.zeros(end, dtype=np.int16)
    for s in segs:
        out[s.start_offset : s.start_offset + s.sample_count] = np.frombuffer(s.pcm, "<i2")
    return out


def placed_turns(db: Path, session_id: str) -> list[dict[str, Any]]:
    """What the replayed caller reported for each turn it placed (its log events)."""
    with RecordingReader(db) as reader:
        events = reader.events(session_id, [EventKind.LOG])
    return [
        dict(e.payload["replay"]) for e in events if e.side is Side.USER and "replay" in e.payload
    ]  # type: ignore[call-overload]


async def composite_verdicts(db: Path, run_id: str) -> dict[str, tuple[str, list[str]]]:
    """Rescore ``run_id``; per scenario: is_successful's verdict and the failed signals."""
    result = await rescore(db, run_id, ScoringConfig(no_judge=True))  # no LLM here
    out: dict[str, tuple[str, list[str]]] = {}
    for outcome in result.sessions:
        for record in outcome.scores:
            if record.signal == "is_successful":
                failed = [str(s) for s in record.detail.get("failed", [])]  # type: ignore[union-attr]
                out[outcome.scenario_name] = (str(record.verdict), failed)
    return out
