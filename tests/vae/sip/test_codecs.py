"""G.711, RTP, telephone-events and the jitter buffer: the pure pieces of vae.sip."""

from __future__ import annotations

import numpy as np
import pytest

from vae.sip import g711
from vae.sip.jitter import JitterBuffer
from vae.sip.rtp import RtpError, RtpPacket, TelephoneEvent, event_packets, parse, parse_event


def sine(n: int, hz: float = 440.0, amp: float = 12000.0) -> np.ndarray:
    return (np.sin(np.arange(n) * 2 * np.pi * hz / 8000) * amp).astype(np.int16)


@pytest.mark.parametrize("law", [g711.PCMU, g711.PCMA])
def test_g711_round_trip_is_telephone_quality(law: int) -> None:
    x = sine(8000)
    y = np.frombuffer(g711.decode(g711.encode(x.tobytes(), law), law), dtype="<i2")
    snr = 10 * np.log10(np.sum(x.astype(float) ** 2) / np.sum((x - y.astype(float)) ** 2))
    assert 30 < snr < 45  # G.711's ~38 dB for a loud sine
    assert len(g711.encode(x.tobytes(), law)) == 8000


def test_g711_known_codes() -> None:
    zero = np.zeros(1, np.int16).tobytes()
    assert g711.encode(zero, g711.PCMU) == b"\xff" and g711.encode(zero, g711.PCMA) == b"\xd5"
    assert np.frombuffer(g711.decode(b"\x2a\xaa", g711.PCMA), "<i2").tolist() == [-32256, 32256]
    assert np.frombuffer(g711.decode(b"\x00\x80", g711.PCMU), "<i2").tolist() == [-32124, 32124]


def test_rtp_round_trip_and_refusals() -> None:
    packet = RtpPacket(0, 65535, 2**32 - 1, 0xDEADBEEF, b"\x01" * 160, marker=True)
    assert parse(packet.to_bytes()) == packet
    with pytest.raises(RtpError, match="shorter"):
        parse(b"\x80\x00")
    with pytest.raises(RtpError, match="version"):
        parse(b"\x40" + bytes(20))
    with pytest.raises(RtpError, match="RTCP"):
        parse(bytes([0x80, 200]) + bytes(20))
    # CSRCs, an extension and padding are skipped
    data = bytes([0xB1, 0]) + bytes(10) + b"CSRC" + b"\x00\x01\x00\x01XXXX" + b"pay" + b"\x00\x02"
    assert parse(data).payload == b"pay"


def test_telephone_events() -> None:
    packets = event_packets("#", 800, 160)
    assert [p.end for p in packets] == [False] * 4 + [True] * 3
    assert parse_event(packets[0].to_bytes()) == TelephoneEvent("#", False, 10, 160)
    assert parse_event(packets[-1].to_bytes()).duration == 800
    with pytest.raises(RtpError, match="keypad"):
        parse_event(bytes([99, 0, 0, 0]))


def test_jitter_buffer_reorders_and_fills_losses() -> None:
    jb = JitterBuffer(depth=320, max_ahead=3200)
    frames = [np.full(160, i + 1, np.int16) for i in range(6)]
    for i in (0, 2, 1, 4, 5):  # 3 never arrives, 1 arrives late but in time
        jb.push(1000 + 160 * i, frames[i])
    out = np.concatenate([jb.pop(160) for _ in range(8)])
    firsts = out[::160].tolist()
    assert firsts == [0, 0, 1, 2, 3, 0, 5, 6]  # 40 ms of delay, reordered, 3 lost as silence
    assert jb.stats.lost_samples == 160 and jb.stats.late == 0
    jb.push(1000, frames[0])  # already played
    assert jb.stats.late == 1


def test_jitter_buffer_resyncs_on_a_jump_and_wraps() -> None:
    jb = JitterBuffer(depth=160, max_ahead=1600)
    jb.push(2**32 - 160, np.full(160, 7, np.int16))
    jb.push(0, np.full(160, 8, np.int16))  # the timestamp wraps
    assert [int(jb.pop(160)[0]) for _ in range(3)] == [0, 7, 8]
    jb.push(10_000_000, np.full(160, 9, np.int16))  # far ahead: a new timeline
    assert jb.stats.resyncs == 1
    assert [int(jb.pop(160)[0]) for _ in range(2)] == [0, 9]
