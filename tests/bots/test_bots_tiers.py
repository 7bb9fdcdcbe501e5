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


async def test_a_scripted_turn_is_over_once_spoken_so_its_last_words_reach_the_peer(
    bridge: BridgeServer,
) -> None:
    """On the virtual clock a text turn lasts its speaking time, as an utterance in audio:
    a script that says its last line and ends the call ends it once the line was spoken and
    reached the voicemail box — not while it is still being "spoken"."""
    lines = [
        "Hello Alex, this is the dental practice with a reminder of your appointment at ten.",
        "If you need to change it, please call us back on five five five. Goodbye.",
    ]
    scenario = {
        "name": "reminder",
        "max_duration": 60,
        "first_speaker": "user",
        "user": {"answers_as": "voicemail",
                 "voicemail": {"expect": "leave_message", "within_s": 30}},
        "agent": {"script": [lines[0], {"say": lines[1], "no_wait": True, "end": True}]},
        "success_signals": ["CLEAN_EXIT"],
    }  # fmt: skip
    run_id = await run_with_bots(
        bridge, [scenario], modality=common_pb2.MODALITY_TEXT, clock=common_pb2.CLOCK_KIND_AUTO
    )
    with RecordingReader(bridge.db_path) as reader:
        (session,) = reader.latest_attempts(run_id).values()
        events = reader.events(session.session_id)
        box = reader.final_states(session.session_id)[Side.USER].state["voicemail"]
        assert reader.session_mode(session.session_id).clock == "virtual"
    assert session.stop_reason == "end_tool" and session.clean_exit
    # The box credits each turn it received (2.5 words a second): both reached it.
    words = sum(len(line.split()) for line in lines)
    assert box["agent_turns"] == 2 and box["message_s"] == round(words / 2.5, 3), box
    said = [e for e in events if e.kind is EventKind.TRANSCRIPT and e.side is Side.AGENT]
    assert [e.payload["text"] for e in said] == lines
    (end,) = [e for e in events if e.kind is EventKind.END_CONVERSATION]
    spoken_end = max(int(e.payload["end_unix_nanos"]) for e in said)
    assert end.bridge_ns >= spoken_end, (end.bridge_ns - spoken_end) / 1e9
