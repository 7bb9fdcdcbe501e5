"""The Twilio connector's parts on their own: μ-law, the messages, the playout queue."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from vae.bridge_service.connectors.base import ConnectorOptionsError
from vae.bridge_service.connectors.twilio import mulaw
from vae.bridge_service.connectors.twilio.connector import parse_options
from vae.bridge_service.connectors.twilio.playout import Frame, Playout
from vae.bridge_service.connectors.twilio.protocol import (
    AgentClear,
    AgentMark,
    AgentMedia,
    AgentStop,
    Outgoing,
    StreamIds,
    Unusable,
    parse,
)


def test_mulaw_matches_g711_reference_points_and_round_trips() -> None:
    pcm = np.array([0, 32767, -32768, 1000, -1000], dtype="<i2").tobytes()
    assert mulaw.encode(pcm)[:3] == bytes([0xFF, 0x80, 0x00])
    x = (np.sin(np.arange(8000) / 7) * 20000).astype("<i2")
    y = np.frombuffer(mulaw.decode(mulaw.encode(x.tobytes())), "<i2")
    err = np.abs(x.astype(int) - y.astype(int))
    assert err.max() <= 512  # half the largest μ-law step
    assert err[np.abs(x) < 100].max() <= 4  # fine steps near zero


def test_outgoing_messages_follow_twilio_shapes() -> None:
    out = Outgoing(StreamIds("AC1", "CA1", "MZ1"))
    assert json.loads(out.connected()) == {
        "event": "connected",
        "protocol": "Call",
        "version": "1.0.0",
    }
    start = json.loads(out.start({"scenario": "s"}))
    assert start["sequenceNumber"] == "1" and start["streamSid"] == "MZ1"
    assert start["start"]["mediaFormat"] == {
        "encoding": "audio/x-mulaw",
        "sampleRate": 8000,
        "channels": 1,
    }
    assert start["start"]["customParameters"] == {"scenario": "s"}
    media = json.loads(out.media(b"\xff" * 160, 20))
    assert media["media"]["chunk"] == "1" and media["media"]["timestamp"] == "20"
    assert base64.b64decode(media["media"]["payload"]) == b"\xff" * 160
    assert json.loads(out.mark("m"))["mark"] == {"name": "m"}
    assert json.loads(out.stop())["stop"] == {"accountSid": "AC1", "callSid": "CA1"}


def test_parse_agent_messages_and_refuse_nonsense() -> None:
    payload = base64.b64encode(b"\x01\x02").decode()
    assert parse(json.dumps({"event": "media", "media": {"payload": payload}})) == AgentMedia(
        b"\x01\x02"
    )
    assert parse('{"event": "mark", "mark": {"name": "a"}}') == AgentMark("a")
    assert parse('{"event": "clear"}') == AgentClear()
    assert parse('{"event": "stop"}') == AgentStop()
    for bad in ("nope", "[]", '{"event": "media", "media": {"payload": "@@"}}', '{"event": 1}'):
        assert isinstance(parse(bad), Unusable)


def test_playout_plays_in_frames_marks_after_their_audio_and_clear_drops() -> None:
    p = Playout(160)
    p.push(b"\x10\x00" * 200)
    p.mark("after")
    first = p.pop()
    assert first.pcm == b"\x10\x00" * 160 and first.marks == []
    second = p.pop()  # 40 samples of audio, then silence; the mark is reached
    assert second.marks == ["after"] and second.pcm[80:] == bytes(240)
    p.push(b"\x10\x00" * 1000)
    p.mark("pending")
    dropped, marks = p.clear()
    assert (dropped, marks) == (1000, ["pending"])
    assert p.pop() == Frame(bytes(320), [])


def test_options_are_checked() -> None:
    options, custom = parse_options({"custom_parameters": {"a": 1}, "media_ms": 20})
    assert custom == {"a": "1"} and options.media_ms == 20
    with pytest.raises(ConnectorOptionsError, match="unknown option 'bogus'"):
        parse_options({"bogus": 1})
    with pytest.raises(ConnectorOptionsError, match="custom_parameters"):
        parse_options({"custom_parameters": []})
