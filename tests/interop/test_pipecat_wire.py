"""The hand-written pipecat frame codec and the RTVI translation, table-tested.

Wire compatibility is checked against pipecat's own generated protobuf code,
run in the pipecat venv (vae's interpreter cannot import it).
"""

from __future__ import annotations

import base64
import json
import subprocess

import pytest

from tests.interop.conftest import require_pipecat_venv
from vae.bridge_service.connectors.base import ConnectorError
from vae.bridge_service.connectors.pipecat.frames import (
    AudioFrame,
    FrameDecodeError,
    InterruptionFrame,
    MessageFrame,
    TextFrame,
    TranscriptionFrame,
    decode,
    encode,
)
from vae.bridge_service.connectors.pipecat.options import parse_options
from vae.bridge_service.connectors.pipecat.rtvi import RtviOptions, RtviTranslator
from vae.recordings.models import EventKind, Side

FRAMES = [
    AudioFrame(b"\x01\x00\xff\x7f" * 40, 24000, 1, pts=123456789),
    AudioFrame(b"", 16000, 2),
    MessageFrame(json.dumps({"label": "rtvi-ai", "type": "bot-ready", "data": {"v": "é"}})),
    TextFrame("hello"),
    TranscriptionFrame("hi there", "u1", "2024-06-01T10:00:00"),
    InterruptionFrame(),
]

# Runs in the pipecat venv: decode our bytes with pipecat's generated classes and
# re-encode them, so both directions are checked against the real schema.
PIPECAT_SIDE = """
import base64, json, sys
import pipecat.frames.protobufs.frames_pb2 as pb
from google.protobuf.json_format import MessageToDict
out = []
for blob in json.load(sys.stdin):
    frame = pb.Frame.FromString(base64.b64decode(blob))
    out.append({"dict": MessageToDict(frame, preserving_proto_field_name=True),
                "bytes": base64.b64encode(frame.SerializeToString()).decode()})
print(json.dumps(out))
"""


def test_codec_round_trips() -> None:
    for frame in FRAMES:
        assert decode(encode(frame)) == frame


def test_codec_matches_pipecats_generated_code() -> None:
    python = require_pipecat_venv()
    blobs = [base64.b64encode(encode(f)).decode() for f in FRAMES]
    done = subprocess.run(
        [str(python), "-c", PIPECAT_SIDE],
        input=json.dumps(blobs),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    theirs = json.loads(done.stdout)
    audio = theirs[0]["dict"]["audio"]
    assert (audio["sample_rate"], audio["num_channels"], audio["pts"]) == (24000, 1, "123456789")
    assert base64.b64decode(audio["audio"]) == FRAMES[0].audio  # type: ignore[union-attr]
    assert json.loads(theirs[2]["dict"]["message"]["data"])["data"]["v"] == "é"
    assert theirs[4]["dict"]["transcription"]["user_id"] == "u1"
    assert "interruption" in theirs[5]["dict"]
    for frame, item in zip(FRAMES, theirs, strict=True):
        assert decode(base64.b64decode(item["bytes"])) == frame


@pytest.mark.parametrize(
    "blob", [b"\x12\x05\x1a\x10ab", b"\x08", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", b""]
)
def test_codec_refuses_garbage(blob: bytes) -> None:
    with pytest.raises(FrameDecodeError):
        decode(blob)


def test_codec_skips_unknown_fields() -> None:
    extra = b"\x98\x01\x05"  # field 19, varint: a newer pipecat's addition
    assert decode(encode(TextFrame("x")) + extra) == TextFrame("x")


def translator(role: Side = Side.AGENT, **options: object) -> RtviTranslator:
    return RtviTranslator(role, RtviOptions(**options), lambda: 42, lambda: 1600)  # type: ignore[arg-type]


def msg(kind: str, data: object = None) -> dict[str, object]:
    return {"label": "rtvi-ai", "type": kind, "data": data}


@pytest.mark.parametrize(
    ("message", "kind", "payload"),
    [
        (
            msg("user-transcription", {"text": "hi", "final": True}),
            EventKind.TRANSCRIPT,
            {"kind": "heard", "text": "hi", "is_final": True},
        ),
        (
            msg("user-started-speaking"),
            EventKind.SPEECH_STARTED,
            {"source": "vad", "sample_offset": -1},
        ),
        (
            msg("bot-started-speaking"),
            EventKind.SPEECH_STARTED,
            {"source": "tts", "sample_offset": 1600},
        ),
        (
            msg("metrics", {"ttfb": [{"processor": "LLM#0", "value": 0.25}]}),
            EventKind.METRIC,
            {"name": "ttfb", "value": 0.25, "unit": "s", "component": "LLM#0"},
        ),
        (
            msg("metrics", {"tokens": [{"prompt_tokens": 9, "completion_tokens": 3}]}),
            EventKind.TOKEN_USAGE,
            {"model": "", "prompt_tokens": 9, "completion_tokens": 3},
        ),
        (msg("error", {"error": "boom", "fatal": False}), EventKind.LOG, None),
    ],
)
def test_rtvi_message_table(message: dict[str, object], kind: EventKind, payload: object) -> None:
    (event,) = translator().translate(message)
    assert event.kind is kind
    if payload is not None:
        assert event.payload == payload
    else:
        assert event.payload["level"] == "error" and "boom" in event.payload["message"]


def test_rtvi_bot_turn_text_and_sources() -> None:
    t = translator()
    for m in (
        msg("bot-started-speaking"),
        msg("bot-output", {"text": "Hi", "spoken": True}),
        msg("bot-tts-text", {"text": "Hello"}),
        msg("bot-tts-text", {"text": "there."}),
        msg("bot-llm-text", {"text": "ignored"}),
    ):
        t.translate(m)
    stopped, transcript = t.translate(msg("bot-stopped-speaking"))
    assert stopped.kind is EventKind.SPEECH_STOPPED
    assert transcript.payload == {
        "kind": "spoken",
        "text": "Hello there.",
        "is_final": True,
        "source": "bot-tts-text",
    }
    assert t.translate(msg("bot-audio-level", {"level": 0.3})) == []


def test_rtvi_function_calls_writes_and_endings() -> None:
    t = translator(write_tools=frozenset({"book"}))
    assert (
        t.translate(
            msg(
                "llm-function-call-in-progress",
                {"tool_call_id": "c1", "function_name": "book", "arguments": {"n": 2}},
            )
        )
        == []
    )
    (call,) = t.translate(
        msg(
            "llm-function-call-stopped",
            {"tool_call_id": "c1", "cancelled": False, "result": {"ok": 1}},
        )
    )
    assert call.payload["name"] == "book" and call.payload["arguments"] == {"n": 2}
    assert call.payload["is_write"] and call.payload["side"] == "agent"
    end_call, end = t.translate(
        msg("llm-function-call-stopped", {"tool_call_id": "c2", "function_name": "end_call"})
    )
    assert not end_call.payload["is_write"]
    assert end.kind is EventKind.END_CONVERSATION and end.payload["kind"] == "agent_end_tool"
    assert t.translate(msg("server-message", {"text": "<exit>bye</exit>"})) == []  # only once
    user = translator(Side.USER)
    (hang_up,) = user.translate(msg("server-message", {"text": "<exit>done</exit>"}))
    assert hang_up.payload["kind"] == "user_hang_up"
    (applied,) = user.translate(
        msg(
            "server-message",
            {
                "type": "action-applied",
                "action": {"type": "toggle", "args": {"on": True}, "side": "user"},
            },
        )
    )
    assert applied.payload["is_write"] and applied.payload["action"] == {
        "type": "toggle",
        "args": {"on": True},
    }
    assert user.calls.summary_actions({"actions": [{"type": "toggle"}]}) == []  # seen live already


def test_connector_options_are_validated() -> None:
    assert parse_options({"write_tools": "book", "send_rate": 24000}).write_tools == ("book",)
    for bad, needle in (
        ({"send_rate": 4000}, "8000..48000"),
        ({"fetch_context": "yes"}, "true or false"),
        ({"prompt_message": "smoke"}, "prompt_message"),
        ({"nope": 1}, "unknown option"),
    ):
        with pytest.raises(ConnectorError, match=needle):
            parse_options(bad)


def test_start_messages_shapes() -> None:
    from vae.bridge_service.connectors.base import SessionStartInfo
    from vae.bridge_service.connectors.pipecat.messages import Requests, start_messages

    start = SessionStartInfo(
        "r",
        "s",
        "sc",
        1,
        Side.AGENT,
        "shop",
        "Be kind.",
        {"book": {"n": "x"}},
        {"db": 1},
        [{"func_name": "f", "arguments": {}}],
        {},
        1000,
        False,
        16000,
    )
    requests = Requests()
    prompt, init = start_messages(start, parse_options({}), requests)
    assert prompt["type"] == "client-message" and prompt["label"] == "rtvi-ai"
    assert prompt["data"] == {
        "t": "update_system_prompt",
        "d": {
            "prompt": "Be kind.",
            "tools": '{"book": {"n": "x"}}',
            "add_suffix": False,
            "tool_domain": "shop",
        },
    }
    assert init["data"]["t"] == "apply_initialization"
    assert init["data"]["d"]["shared_state_init"] == {"db": 1}
    assert requests.pop({"id": prompt["id"]}) == "prompt" and requests.pop({"id": "x"}) is None
    action, kickoff = start_messages(
        start,
        parse_options(
            {"prompt_message": "action", "send_initialization": False, "kickoff_text": "Hello"}
        ),
        Requests(),
    )
    assert action["type"] == "action" and action["data"]["action"] == "update_system_prompt"
    assert {"name": "prompt", "value": "Be kind."} in action["data"]["arguments"]
    assert kickoff["type"] == "send-text" and kickoff["data"]["content"] == "Hello"
    assert (
        start_messages(
            start,
            parse_options({"prompt_message": "none", "send_initialization": False}),
            Requests(),
        )
        == []
    )
