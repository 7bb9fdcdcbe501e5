"""The LLM-driven reference bot in a text session on the virtual clock.

The peer's turns are what it hears, as text, whether or not the run shares
transcripts; its completions are its turns; the loopback LLM answers through
the real ``openai`` client, and the session's clock waits for it.
"""

from __future__ import annotations

from tests.bots.conftest import run_with_bots
from tests.bots.test_bots_bridge import ScriptedLlm, llm_scenario
from vae.bots.brains.llm import LlmBrain, LlmSettings
from vae.bots.stand_in.openai_server import OpenAICompatibleServer
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import EventKind, Side
from vae.recordings.read.reader import RecordingReader


async def test_the_llm_bot_reads_and_answers_text_turns_on_the_virtual_clock(
    bridge: BridgeServer,
) -> None:
    llm = ScriptedLlm()
    spoken = "Please move booking B one to May first."
    with OpenAICompatibleServer(llm) as server:
        settings = LlmSettings(base_url=server.base_url, model="stand-in")
        run_id = await run_with_bots(
            bridge,
            [llm_scenario("llm_text")],
            agent=lambda: LlmBrain(settings),
            modality=common_pb2.MODALITY_TEXT,
            clock=common_pb2.CLOCK_KIND_VIRTUAL,
        )
    heard = [m["content"] for msgs in llm.requests for m in msgs if m["role"] == "user"]
    assert spoken in heard, "the caller's turn reached the LLM as text (no sharing needed)"
    with RecordingReader(bridge.db_path) as reader:
        (session,) = reader.latest_attempts(run_id).values()
        events = reader.events(session.session_id)
        final = reader.final_states(session.session_id)[Side.AGENT]
        mode = reader.session_mode(session.session_id)
    assert (mode.modality, mode.clock) == ("text", "virtual")
    assert session.stop_reason == "end_tool" and session.clean_exit
    said = [(e.side, e.payload["text"]) for e in events if e.kind is EventKind.TRANSCRIPT]
    assert said == [
        (Side.AGENT, "Hello, how can I help?"),
        (Side.USER, spoken),
        (Side.AGENT, "Done, goodbye."),
    ]
    calls = [e.payload for e in events if e.kind is EventKind.TOOL_CALL]
    assert [c["name"] for c in calls] == ["change_flight"] and calls[0]["is_write"]
    assert final.state["bookings"]["B1"]["date"] == "2026-05-01"
