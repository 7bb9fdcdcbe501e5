"""A session's stereo recording as a compact ``data:`` URI for the report's player.

User left, agent right, on the bridge clock (the export's stereo mix), down to
16 kHz and compressed as Ogg Vorbis — about 1–2 kB per second of call, so a
report of a dozen sessions stays a few hundred kB and needs no network to play.
FLAC is the fallback where libsndfile lacks Vorbis.
"""

from __future__ import annotations

import base64
import io

import numpy as np
import soundfile as sf
import soxr

from recordings.export import stereo_mix
from recordings.reader import RecordingReader

PLAYER_RATE = 16000


def _encode(stereo: np.ndarray, rate: int) -> tuple[bytes, str]:
    formats = sf.available_formats()
    buf = io.BytesIO()
    if "OGG" in formats and "VORBIS" in sf.available_subtypes("OGG"):
        sf.write(buf, stereo, rate, format="OGG", subtype="VORBIS")
        return buf.getvalue(), "audio/ogg"
    sf.write(buf, stereo, rate, format="FLAC", subtype="PCM_16")
    return buf.getvalue(), "audio/flac"


def session_audio_uri(reader: RecordingReader, session_id: str) -> str:
    """``data:audio/ogg;base64,...`` of the session, or "" when nothing was recorded."""
    mix, rate = stereo_mix(reader, session_id)
    if len(mix) == 0:
        return ""
    if rate > PLAYER_RATE:
        # soxr on the whole recording: one pass, no chunk edges, milliseconds.
        down = soxr.resample(mix.astype(np.float32) / 32768.0, rate, PLAYER_RATE, quality="HQ")
        mix, rate = np.clip(down * 32768.0, -32768, 32767).astype(np.int16), PLAYER_RATE
    data, mime = _encode(mix, rate)
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
