"""A session's stereo recording as a compact ``data:`` URI for the report's player.

User left, agent right, on the bridge clock (the export's stereo mix), down to
16 kHz and compressed as Ogg Vorbis — about 1–2 kB per second of call, so a
report of a dozen sessions stays a few hundred kB and needs no network to play.
FLAC is the fallback where libsndfile lacks Vorbis.
"""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from vae.recordings.read.export import stereo_mix
from vae.recordings.read.reader import RecordingReader

PLAYER_RATE = 16000


def _encode(stereo: np.ndarray, rate: int) -> tuple[bytes, str]:
    formats = sf.available_formats()
    buf = io.BytesIO()
    if "OGG" in formats and "VORBIS" in sf.available_subtypes("OGG"):
        sf.write(buf, stereo, rate, format="OGG", subtype="VORBIS")
        return buf.getvalue(), "audio/ogg"
    sf.write(buf, stereo, rate, format="FLAC", subtype="PCM_16")
    return buf.getvalue(), "audio/flac"


def session_audio(reader: RecordingReader, session_id: str) -> tuple[bytes, str] | None:
    """The session's stereo player file and its MIME type; None when nothing was recorded."""
    mix, rate = stereo_mix(reader, session_id)
    if len(mix) == 0:
        return None
    if rate > PLAYER_RATE:
        # soxr on the whole recording: one pass, no chunk edges, milliseconds.
        down = soxr.resample(mix.astype(np.float32) / 32768.0, rate, PLAYER_RATE, quality="HQ")
        mix, rate = np.clip(down * 32768.0, -32768, 32767).astype(np.int16), PLAYER_RATE
    return _encode(mix, rate)


def session_audio_uri(reader: RecordingReader, session_id: str) -> str:
    """``data:audio/ogg;base64,...`` of the session, or "" when nothing was recorded."""
    found = session_audio(reader, session_id)
    if found is None:
        return ""
    data, mime = found
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def write_session_audio(reader: RecordingReader, session_id: str, folder: Path) -> str:
    """Write the player file into ``folder``; its file name, or "" when nothing was recorded.

    For large reports: audio beside the HTML instead of inside it keeps the
    page small and fast to open (the folder must travel with the HTML).
    """
    found = session_audio(reader, session_id)
    if found is None:
        return ""
    data, mime = found
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", session_id) + (".ogg" if "ogg" in mime else ".flac")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)
    return name
