"""G.711 μ-law, the encoding of telephone audio (Twilio Media Streams: 8 kHz mono).

Why our own: the standard library's ``audioop`` is gone from Python 3.13, and
the codec is two small vectorised functions. Encoding is the ITU-T G.711
segment/mantissa form with the usual bias (0x84) and clip (32635); decoding is
a 256-entry table built from the same definition, so decode(encode(x)) is the
nearest μ-law level of x.
"""

from __future__ import annotations

import numpy as np

_BIAS = 0x84
_CLIP = 32635


def _decode_table() -> np.ndarray:
    codes = ~np.arange(256, dtype=np.int32) & 0xFF
    sign = codes & 0x80
    exponent = (codes >> 4) & 0x07
    mantissa = codes & 0x0F
    magnitude = (((mantissa << 3) + _BIAS) << exponent) - _BIAS
    return np.where(sign != 0, -magnitude, magnitude).astype(np.int16)


_DECODE = _decode_table()


def decode(ulaw: bytes) -> bytes:
    """μ-law bytes -> PCM16 LE bytes (one sample per byte)."""
    return _DECODE[np.frombuffer(ulaw, dtype=np.uint8)].astype("<i2").tobytes()


def encode(pcm: bytes) -> bytes:
    """PCM16 LE bytes -> μ-law bytes."""
    x = np.frombuffer(pcm, dtype="<i2").astype(np.int32)
    sign = np.where(x < 0, 0x80, 0)
    magnitude = np.minimum(np.abs(x), _CLIP) + _BIAS
    exponent = np.clip(np.floor(np.log2(magnitude)).astype(np.int32) - 7, 0, 7)
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    return bytes((~(sign | (exponent << 4) | mantissa) & 0xFF).astype(np.uint8).tobytes())
