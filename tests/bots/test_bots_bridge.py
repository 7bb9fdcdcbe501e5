"""The reference bots against a real bridge: barge-ins and transcript sharing.

Everything is real: the bridge serves gRPC on loopback and records into SQLite
under tmp_path, the bots stream paced PCM, the scorer measures timing from the
recorded audio, and the LLM-driven bot talks to a loopback OpenAI-compatible
server through the real ``openai`` client.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.bots.conftest import run_with_bots
from vae.bots.brains.llm import LlmBrain, LlmSettings
from vae.bots.stand_in.openai_server import OpenAICompatibleServer
from vae.bridge_service.server import BridgeServer
from vae.recordings.models import EventKind, Side
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore

LONG = "Let me explain our baggage policy: each checked bag may weigh twenty three kilos."


def barge_scenario(name: str, barge: bool) -> dict[str, Any]:
    interrupt: dict[str, Any] = {"say": "Sorry, just add one bag please."}
    if barge:
        interrupt["barge_in_after_s"] = 1.0
    return {
        "name": name,
        "domain": "airline",
        "max_duration": 40,
        "user": {"script": ["Hi, I have a baggage question.", interrupt]},
        "agent": {"script": ["Hello, how can I help?", LONG, {"say": "Done.", "end": True}]},
        "success_signals": ["CLEAN_EXIT"],
    }


async def test_a_barge_in_shows_as_an_interruption_the_agent_yields_to(
    bridge: BridgeServer,
) -> None:
    run_id = await run_with_bots(
        bridge, [barge_scenario("barge", True), barge_scenario("polite", False)]
    )
    result = await rescore(bridge.db_path, run_id, ScoringConfig(scorers=["timing"]))
    by_name = {o.scenario_name: o for o in result.sessions}
    barge, polite = by_name["barge"], by_name["polite"]
    barge_ins = barge.get("timing.user_barge_ins")
    assert barge_ins is not None and barge_ins.value is not None and barge_ins.value >= 1
    yields = barge.get("timing.yield_rate")
    assert yields is not None and yields.value == 1.0, yields
    rows = yields.detail["barge_ins"]
    assert rows[0]["yield_latency_s"] < 1.0, "the agent stops within its yield_after_s"
    none = polite.get("timing.user_barge_ins")
    assert none is not None and none.value == 0, "no barge-in without the cue"
    with RecordingReader(bridge.db_path) as reader:
        sid = barge.session_id
        said = [
            e.payload["text"]
            for e in reader.events(sid, [EventKind.TRANSCRIPT])
            if e.side is Side.AGENT
        ]
        logs = [e.payload["message"] for e in reader.events(sid, [EventKind.LOG])]
        session = reader.session(sid)
    assert session is not None and session.stop_reason == "end_tool"
    cut = next(t for t in said if t.startswith("Let me explain"))
    assert len(cut) < len(LONG), "the yielded utterance is reported as far as it was spoken"
    assert any("yielded" in m for m in logs)


class ScriptedLlm:
    """An LLM stand-in: greet, then change the flight, then confirm and end the call."""

    def __init__(self) -> None:
        self.requests: list[list[dict[str, Any]]] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = request["messages"]
        self.requests.append(messages)
        last = messages[-1]["role"]
        if last == "system":
            return {"content": "Hello, how can I help?"}
        if last == "user":
            args = json.dumps({"booking_id": "B1", "new_date": "2026-05-01"})
            call = {"id": "call_1", "type": "function",
                    "function": {"name": "change_flight", "arguments": args}}  # fmt: skip
            return {"content": None, "tool_calls": [call]}
        end = {"id": "call_2", "type": "function",
               "function": {"name": "end_conversation", "arguments": "{}"}}  # fmt: skip
        return {"content": "Done, goodbye.", "tool_calls": [end]}


def llm_scenario(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "max_duration": 40,
        "user": {"script": ["Please move booking B one to May first."]},
        "agent": {
            "resources": {"tools": {"change_flight": {"booking_id": "code", "new_date": "date"}}},
            "tool_effects": {
                "change_flight": [
                    {"op": "set", "path": "bookings.{booking_id}.date", "value": "$args.new_date"}
                ]
            },
        },
        "initial_state": {"bookings": {"B1": {"date": "2026-04-01"}}},
        "success_signals": ["CLEAN_EXIT"],
    }


async def _llm_run(bridge: BridgeServer, share: bool) -> tuple[ScriptedLlm, dict[str, Any]]:
    llm = ScriptedLlm()
    with OpenAICompatibleServer(llm) as server:
        settings = LlmSettings(base_url=server.base_url, model="stand-in", transcript_wait_s=1.0)
        run_id = await run_with_bots(
            bridge,
            [llm_scenario(f"llm_share_{share}")],
            agent=lambda: LlmBrain(settings),
            share_transcripts=share,
        )
    with RecordingReader(bridge.db_path) as reader:
        (session,) = reader.latest_attempts(run_id).values()
        events = reader.events(session.session_id)
        final = reader.final_states(session.session_id)[Side.AGENT]
    return llm, {"session": session, "events": events, "final": final}


async def test_transcript_sharing_reaches_the_peer_only_when_enabled(
    bridge: BridgeServer,
) -> None:
    spoken = "Please move booking B one to May first."
    # Two runs at once on one bridge, each with its own bots (run filters).
    (shared_llm, shared), (private_llm, private) = await asyncio.gather(
        _llm_run(bridge, share=True), _llm_run(bridge, share=False)
    )

    def user_turns(llm: ScriptedLlm) -> list[str]:
        return [m["content"] for msgs in llm.requests for m in msgs if m["role"] == "user"]

    assert spoken in user_turns(shared_llm)
    assert spoken in json.dumps(shared["final"].context)
    assert spoken not in user_turns(private_llm)
    assert spoken not in json.dumps(private["final"].context)
    assert any("no transcript is available" in t for t in user_turns(private_llm))
    for run in (shared, private):
        # Both runs complete the task the same way: the LLM bot's tool call,
        # token usage and end tool are all recorded.
        assert run["session"].stop_reason == "end_tool"
        calls = [e.payload for e in run["events"] if e.kind is EventKind.TOOL_CALL]
        assert calls and calls[0]["name"] == "change_flight" and calls[0]["is_write"]
        assert any(e.kind is EventKind.TOKEN_USAGE for e in run["events"])
        assert run["final"].state["bookings"]["B1"]["date"] == "2026-05-01"


async def test_a_bot_released_without_a_session_rejoins_and_stops_cleanly(
    bridge: BridgeServer,
) -> None:
    from vae.bots.runner import BotConfig, run_bots
    from vae.bots.sound.speech import BuzzSynthesiser

    stop = asyncio.Event()
    config = BotConfig(bridge.address, "user", lambda: None, synth=BuzzSynthesiser())  # type: ignore[arg-type,return-value]
    task = asyncio.create_task(run_bots(config, stop))
    await asyncio.sleep(0)  # let it join; nothing pairs it
    stop.set()
    async with asyncio.timeout(5):
        outcomes = await task
    assert outcomes == []
