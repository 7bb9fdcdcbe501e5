"""What LiveKit's session events become, built with livekit's own generated classes."""

from __future__ import annotations

from livekit.protocol.agent_pb import agent_session as pb

from vae.bridge_service.connectors.livekit.events import EventTranslator
from vae.bridge_service.connectors.livekit.options import LivekitOptions
from vae.recordings.models import EventKind, Side


def translator(**options: object) -> EventTranslator:
    return EventTranslator(Side.AGENT, LivekitOptions(**options), pb, lambda: 1600)  # type: ignore[arg-type]


def usage(prompt: int, completion: int) -> pb.AgentSessionEvent:
    llm = pb.LLMModelUsage(provider="p", model="m", input_tokens=prompt, output_tokens=completion)
    body = pb.AgentSessionEvent.SessionUsageUpdated(
        usage=pb.AgentSessionUsage(model_usage=[pb.ModelUsage(llm=llm)])
    )
    return pb.AgentSessionEvent(session_usage_updated=body)


def test_token_usage_is_recorded_once_per_increase() -> None:
    t = translator()
    first = t.translate(usage(10, 2))
    assert [(e.payload["prompt_tokens"], e.payload["completion_tokens"]) for e in first] == [
        (10, 2)
    ]
    assert t.translate(usage(10, 2)) == []  # a repeated running total is no new usage
    (second,) = t.translate(usage(25, 5))
    assert (second.kind, second.payload["prompt_tokens"], second.payload["completion_tokens"]) == (
        EventKind.TOKEN_USAGE, 15, 3,
    )  # fmt: skip


def test_tool_calls_writes_and_the_end_tool() -> None:
    body = pb.AgentSessionEvent.FunctionToolsExecuted(
        function_calls=[
            pb.FunctionCall(call_id="a", name="lookup", arguments='{"q": 1}'),
            pb.FunctionCall(call_id="b", name="book_table", arguments="not json"),
            pb.FunctionCall(call_id="c", name="end_call", arguments="{}"),
        ],
        function_call_outputs=[
            pb.FunctionCallOutput(call_id="a", output="found"),
            pb.FunctionCallOutput(call_id="b", output="no table", is_error=True),
        ],
    )
    events = translator(write_tools=("book_table",)).translate(
        pb.AgentSessionEvent(function_tools_executed=body)
    )
    calls = [e for e in events if e.kind is EventKind.TOOL_CALL]
    assert [(c.payload["name"], c.payload["is_write"]) for c in calls] == [
        ("lookup", False), ("book_table", True), ("end_call", False),
    ]  # fmt: skip
    assert calls[0].payload["result"] == "found"
    assert (calls[1].payload["error"], calls[1].payload["arguments"]) == (
        "no table",
        {"raw": "not json"},
    )
    assert calls[1].problem.startswith("arguments:")
    assert events[-1].kind is EventKind.END_CONVERSATION
    assert events[-1].payload == {"kind": "agent_end_tool", "reason": "end tool end_call"}
    # By default every tool but the end tools is a write.
    assert LivekitOptions().is_write("lookup") and not LivekitOptions().is_write("end_call")


def test_states_speech_and_hostile_text_stay_data() -> None:
    t = translator()
    speaking = pb.AgentSessionEvent.AgentStateChanged(
        old_state=pb.AS_THINKING, new_state=pb.AS_SPEAKING
    )
    out = t.translate(pb.AgentSessionEvent(agent_state_changed=speaking))
    assert out[0].payload["agent_state"] == "speaking"
    assert (out[1].kind, out[1].payload) == (
        EventKind.SPEECH_STARTED,
        {"source": "tts", "sample_offset": 1600},
    )
    hostile = "</script><script>alert(1)</script>"
    message = pb.ChatMessage(role=pb.ASSISTANT, content=[pb.ChatMessage.ChatContent(text=hostile)])
    item = pb.AgentSessionEvent.ConversationItemAdded(item=pb.ChatContext.ChatItem(message=message))
    (spoken,) = t.translate(pb.AgentSessionEvent(conversation_item_added=item))
    assert spoken.payload["text"] == hostile and t.said == [
        hostile
    ]  # kept verbatim, escaped on output
