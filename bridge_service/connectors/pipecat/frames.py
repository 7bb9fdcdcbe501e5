"""pipecat's protobuf ``Frame`` on the wire, without pipecat or its generated code.

pipecat pins protobuf < 7 and vae's stubs need protobuf >= 7, so vae never
imports pipecat. The message is small enough to encode by hand
from its schema (pipecat ``frames/frames.proto``, package ``pipecat``)::

    message Frame { oneof frame {
      TextFrame text = 1;                 // id=1 uint64, name=2, text=3
      AudioRawFrame audio = 2;            // id=1, name=2, audio=3 bytes,
                                          // sample_rate=4, num_channels=5, pts=6
      TranscriptionFrame transcription = 3;  // id, name, text=3, user_id=4, timestamp=5
      MessageFrame message = 4;           // data=1 (JSON text: RTVI messages)
      InterruptionFrame interruption = 5; // id, name
    } }

Encoding follows the protobuf wire format (varints and length-delimited
fields); decoding skips unknown fields, so a newer pipecat adding fields still
decodes. Anything that is not a valid ``Frame`` raises :class:`FrameDecodeError`.
"""

from __future__ import annotations

from dataclasses import dataclass

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


class FrameDecodeError(ValueError):
    """The bytes are not a pipecat protobuf Frame."""


@dataclass(frozen=True, slots=True)
class AudioFrame:
    audio: bytes
    sample_rate: int
    num_channels: int
    pts: int | None = None


@dataclass(frozen=True, slots=True)
class TextFrame:
    text: str


@dataclass(frozen=True, slots=True)
class TranscriptionFrame:
    text: str
    user_id: str = ""
    timestamp: str = ""


@dataclass(frozen=True, slots=True)
class MessageFrame:
    #: JSON text (an RTVI message for pipecat bots).
    data: str


@dataclass(frozen=True, slots=True)
class InterruptionFrame:
    pass


Frame = AudioFrame | TextFrame | TranscriptionFrame | MessageFrame | InterruptionFrame


# ---------------------------------------------------------------- encoding
def _varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _len_field(number: int, data: bytes) -> bytes:
    return _key(number, _LEN) + _varint(len(data)) + data


def _int_field(number: int, value: int) -> bytes:
    return _key(number, _VARINT) + _varint(value) if value else b""


def encode(frame: Frame) -> bytes:
    """Serialise one frame as pipecat's ProtobufFrameSerializer would."""
    if isinstance(frame, AudioFrame):
        body = (
            (_len_field(3, frame.audio) if frame.audio else b"")
            + _int_field(4, frame.sample_rate)
            + _int_field(5, frame.num_channels)
        )
        if frame.pts is not None:
            body += _key(6, _VARINT) + _varint(frame.pts)
        return _len_field(2, body)
    if isinstance(frame, MessageFrame):
        return _len_field(4, _len_field(1, frame.data.encode()) if frame.data else b"")
    if isinstance(frame, TextFrame):
        return _len_field(1, _len_field(3, frame.text.encode()) if frame.text else b"")
    if isinstance(frame, TranscriptionFrame):
        body = b"".join(
            _len_field(n, v.encode())
            for n, v in ((3, frame.text), (4, frame.user_id), (5, frame.timestamp))
            if v
        )
        return _len_field(3, body)
    return _len_field(5, b"")


# ---------------------------------------------------------------- decoding
def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise FrameDecodeError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise FrameDecodeError("varint too long")


def _fields(data: bytes) -> dict[int, bytes | int]:
    """The last value of each field (proto3 semantics for non-repeated fields)."""
    out: dict[int, bytes | int] = {}
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise FrameDecodeError("field number 0")
        if wire == _VARINT:
            out[number], pos = _read_varint(data, pos)
        elif wire == _LEN:
            size, pos = _read_varint(data, pos)
            if pos + size > len(data):
                raise FrameDecodeError("truncated length-delimited field")
            out[number] = data[pos : pos + size]
            pos += size
        elif wire == _I64:
            pos += 8
        elif wire == _I32:
            pos += 4
        else:
            raise FrameDecodeError(f"unsupported wire type {wire}")
    if pos != len(data):
        raise FrameDecodeError("truncated fixed-width field")
    return out


def _bytes(fields: dict[int, bytes | int], number: int) -> bytes:
    value = fields.get(number, b"")
    if not isinstance(value, bytes):
        raise FrameDecodeError(f"field {number} should be length-delimited")
    return value


def _text(fields: dict[int, bytes | int], number: int) -> str:
    try:
        return _bytes(fields, number).decode()
    except UnicodeDecodeError as exc:
        raise FrameDecodeError(f"field {number} is not UTF-8") from exc


def _int(fields: dict[int, bytes | int], number: int) -> int:
    value = fields.get(number, 0)
    if not isinstance(value, int):
        raise FrameDecodeError(f"field {number} should be a varint")
    return value


def decode(data: bytes) -> Frame:
    """Parse one serialised ``pipecat.Frame``."""
    outer = _fields(data)
    for number in (2, 4, 1, 3, 5):
        if number not in outer:
            continue
        inner = _fields(_bytes(outer, number))
        if number == 2:
            pts = inner.get(6)
            return AudioFrame(
                _bytes(inner, 3),
                _int(inner, 4),
                _int(inner, 5),
                pts if isinstance(pts, int) else None,
            )
        if number == 4:
            return MessageFrame(_text(inner, 1))
        if number == 1:
            return TextFrame(_text(inner, 3))
        if number == 3:
            return TranscriptionFrame(_text(inner, 3), _text(inner, 4), _text(inner, 5))
        return InterruptionFrame()
    raise FrameDecodeError("no frame set in the oneof")
