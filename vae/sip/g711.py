"""G.711, the narrowband telephone codecs: μ-law (PCMU, RTP payload 0) and A-law (PCMA, 8).

Why tables: a call encodes and decodes 8000 samples a second each way, so
both directions are one numpy lookup. The tables are built once from the
ITU-T G.711 segment definitions (the encoder works on the sample's magnitude
in 13-bit (A-law) or 14-bit (μ-law) range, finds its segment, keeps four
mantissa bits; the decoder returns the middle of the code's interval), so
``decode(encode(x))`` is the G.711 level nearest to ``x``. No I/O here.
"""

from __future__ import annotations

import numpy as np

RATE = 8000
#: RTP static payload types (RFC 3551) and SDP encoding names.
PCMU, PCMA = 0, 8
NAMES = {PCMU: "PCMU", PCMA: "PCMA"}
BY_NAME = {name: pt for pt, name in NAMES.items()}

_MU_BIAS = 0x84
_MU_CLIP = 8159


def _segment(values: np.ndarray, ends: tuple[int, ...]) -> np.ndarray:
    """Index of the first segment end that is >= each value (8 when past the last)."""
    return np.searchsorted(np.asarray(ends), values, side="left")


def _mulaw_encode_table() -> np.ndarray:
    pcm = np.arange(-32768, 32768, dtype=np.int32) >> 2
    mask = np.where(pcm < 0, 0x7F, 0xFF)
    magnitude = np.minimum(np.abs(pcm), _MU_CLIP) + (_MU_BIAS >> 2)
    seg = _segment(magnitude, (0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF))
    code = (np.minimum(seg, 7) << 4) | ((magnitude >> (np.minimum(seg, 7) + 1)) & 0x0F)
    code = np.where(seg >= 8, 0x7F, code)
    return (code ^ mask).astype(np.uint8)


def _mulaw_decode_table() -> np.ndarray:
    code = ~np.arange(256, dtype=np.int32) & 0xFF
    t = (((code & 0x0F) << 3) + _MU_BIAS) << ((code & 0x70) >> 4)
    return np.where(code & 0x80, _MU_BIAS - t, t - _MU_BIAS).astype(np.int16)


def _alaw_encode_table() -> np.ndarray:
    pcm = np.arange(-32768, 32768, dtype=np.int32) >> 3
    mask = np.where(pcm >= 0, 0xD5, 0x55)
    magnitude = np.where(pcm >= 0, pcm, -pcm - 1)
    seg = _segment(magnitude, (0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF))
    low = np.where(seg < 2, magnitude >> 1, magnitude >> np.maximum(seg, 1)) & 0x0F
    code = np.where(seg >= 8, 0x7F, (np.minimum(seg, 7) << 4) | low)
    return (code ^ mask).astype(np.uint8)


def _alaw_decode_table() -> np.ndarray:
    code = np.arange(256, dtype=np.int32) ^ 0x55
    seg = (code & 0x70) >> 4
    t = (code & 0x0F) << 4
    t = np.where(seg == 0, t + 8, (t + 0x108) << np.maximum(seg - 1, 0))
    return np.where(code & 0x80, t, -t).astype(np.int16)


_ENCODE = {PCMU: _mulaw_encode_table(), PCMA: _alaw_encode_table()}
_DECODE = {PCMU: _mulaw_decode_table(), PCMA: _alaw_decode_table()}


def encode(pcm: bytes, payload_type: int) -> bytes:
    """PCM16 LE mono at 8 kHz -> G.711 bytes (one byte per sample)."""
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.int32) + 32768
    return bytes(_ENCODE[payload_type][samples].tobytes())


def decode(data: bytes, payload_type: int) -> bytes:
    """G.711 bytes -> PCM16 LE mono at 8 kHz."""
    return bytes(_DECODE[payload_type][np.frombuffer(data, dtype=np.uint8)].astype("<i2").tobytes())


def silence(samples: int, payload_type: int) -> bytes:
    """``samples`` of digital silence in ``payload_type``."""
    return encode(bytes(2 * samples), payload_type)
