"""RTP packets (RFC 3550) and telephone-events (RFC 4733), built and parsed; no I/O.

A call's audio travels as RTP: a 12-byte header (version 2, payload type,
sequence number, timestamp in samples, the sender's SSRC), optional CSRCs,
an optional header extension and padding, then the payload (160 G.711 bytes
for 20 ms at 8 kHz). Keypad presses travel in the same stream as
telephone-events: one event (the key, an end bit, a volume, a duration in
samples) repeated while the key is held, the first packet with the marker
bit, the last three with the end bit, all with the timestamp of the key's
start (RFC 4733 §2.5).

:func:`parse` refuses what is not RTP with :class:`RtpError` and a reason
(the media layer counts and records refusals; a hostile stream never raises
past it).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

HEADER = struct.Struct("!BBHII")
#: RFC 4733 event codes of the keypad.
EVENT_CODES = {**{str(d): d for d in range(10)}, "*": 10, "#": 11, "A": 12, "B": 13, "C": 14,
               "D": 15}  # fmt: skip
EVENT_KEYS = {code: key for key, code in EVENT_CODES.items()}
_EVENT = struct.Struct("!BBH")


class RtpError(ValueError):
    """Bytes that are not an RTP packet vae can use; the message says why."""


@dataclass(frozen=True, slots=True)
class RtpPacket:
    payload_type: int
    sequence: int
    timestamp: int
    ssrc: int
    payload: bytes
    marker: bool = False

    def to_bytes(self) -> bytes:
        first = 0x80  # version 2, no padding, no extension, no CSRC
        second = (0x80 if self.marker else 0) | (self.payload_type & 0x7F)
        head = HEADER.pack(
            first, second, self.sequence & 0xFFFF, self.timestamp & 0xFFFFFFFF, self.ssrc
        )
        return head + self.payload


def parse(data: bytes) -> RtpPacket:
    """One RTP packet; :class:`RtpError` for anything else (RTCP included)."""
    if len(data) < HEADER.size:
        raise RtpError(f"{len(data)} bytes: shorter than an RTP header")
    first, second, sequence, timestamp, ssrc = HEADER.unpack_from(data)
    if first >> 6 != 2:
        raise RtpError(f"RTP version {first >> 6}, not 2")
    payload_type = second & 0x7F
    if 72 <= payload_type <= 76:
        raise RtpError("an RTCP packet on the RTP port")
    offset = HEADER.size + 4 * (first & 0x0F)
    if first & 0x10:  # header extension: 16-bit profile, 16-bit length in words
        if len(data) < offset + 4:
            raise RtpError("truncated header extension")
        (words,) = struct.unpack_from("!H", data, offset + 2)
        offset += 4 + 4 * words
    end = len(data)
    if first & 0x20:  # padding: the last byte counts the padding bytes
        if end == 0 or data[-1] == 0:
            raise RtpError("padding bit set with no padding")
        end -= data[-1]
    if end < offset:
        raise RtpError("header and padding longer than the packet")
    return RtpPacket(payload_type, sequence, timestamp, ssrc, bytes(data[offset:end]),
                     bool(second & 0x80))  # fmt: skip


@dataclass(frozen=True, slots=True)
class TelephoneEvent:
    """One RFC 4733 event payload: ``key`` is the keypad character."""

    key: str
    end: bool
    volume: int
    duration: int

    def to_bytes(self) -> bytes:
        flags = (0x80 if self.end else 0) | (self.volume & 0x3F)
        return _EVENT.pack(EVENT_CODES[self.key], flags, min(self.duration, 0xFFFF))


def parse_event(payload: bytes) -> TelephoneEvent:
    """A telephone-event payload; :class:`RtpError` for a short one or a non-keypad event."""
    if len(payload) < _EVENT.size:
        raise RtpError(f"telephone-event of {len(payload)} bytes (needs 4)")
    code, flags, duration = _EVENT.unpack_from(payload)
    key = EVENT_KEYS.get(code)
    if key is None:
        raise RtpError(f"telephone-event {code} is not a keypad key")
    return TelephoneEvent(key, bool(flags & 0x80), flags & 0x3F, duration)


def event_packets(key: str, duration_samples: int, step_samples: int) -> list[TelephoneEvent]:
    """The payloads of one key press: growing durations every ``step_samples``, then 3 ends."""
    out = [
        TelephoneEvent(key, False, 10, d)
        for d in range(step_samples, duration_samples, step_samples)
    ]
    out += [TelephoneEvent(key, True, 10, duration_samples)] * 3
    return out
