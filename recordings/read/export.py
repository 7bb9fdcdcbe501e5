"""Exports of a recorded session: stereo and mono audio, transcripts, events.

Stereo files put the user on the left and the agent on the right, both laid on
the bridge clock from the session's start (aligned on arrival time, silence
where nobody spoke), at the higher of the two channels' rates.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from vae.recordings import identifiers
from vae.recordings.audio import resample_whole
from vae.recordings.identifiers import contained
from vae.recordings.models import Channel, EventKind
from vae.recordings.read.reader import ChannelAudio, RecordingReader

AUDIO_FORMATS = {"wav": "WAV", "flac": "FLAC"}


def stereo_mix(reader: RecordingReader, session_id: str) -> tuple[np.ndarray, int]:
    """(N, 2) int16 samples, user left and agent right, and their rate."""
    user = reader.read_channel(session_id, Channel.USER)
    agent = reader.read_channel(session_id, Channel.AGENT)
    return mix_channels(user, agent)


def mix_channels(user: ChannelAudio, agent: ChannelAudio) -> tuple[np.ndarray, int]:
    """Put two channels side by side at the higher of their rates."""
    rate = max(user.sample_rate, agent.sample_rate)
    left = resample_whole(user.samples, user.sample_rate, rate)
    right = resample_whole(agent.samples, agent.sample_rate, rate)
    length = max(len(left), len(right))
    out = np.zeros((length, 2), dtype=np.int16)
    out[: len(left), 0] = left
    out[: len(right), 1] = right
    return out, rate


def transcript(reader: RecordingReader, session_id: str) -> list[dict[str, Any]]:
    """Final transcripts of what each side said, in bridge-time order."""
    session = reader.session(session_id)
    t0 = session.started_ns if session else 0
    turns = []
    for e in reader.events(session_id, [EventKind.TRANSCRIPT]):
        if not e.payload.get("is_final", True) or e.payload.get("kind") == "heard":
            continue
        turns.append(
            {
                "side": str(e.side),
                "text": e.payload.get("text", ""),
                "t_s": round((e.bridge_ns - t0) / 1e9, 3),
            }
        )
    return turns


def export_session(
    reader: RecordingReader, session_id: str, out_dir: str | Path, fmt: str
) -> list[Path]:
    """Write one session's files into ``out_dir``; return the paths written.

    ``fmt`` is ``wav`` or ``flac`` (stereo plus one mono file per side) or
    ``json`` (transcript, events, final states and the session record).
    """
    out = Path(out_dir)
    session = reader.session(session_id)
    if session is None:
        raise KeyError(f"no session {session_id!r}")
    # Names recorded before the identifier grammar existed may hold anything.
    stem = f"{identifiers.slug(session.scenario_name, 'scenario')}.{session.attempt}"
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if fmt in AUDIO_FORMATS:
        subtype = "PCM_16"
        # Each channel is read from the store once and serves both files.
        sides = {c: reader.read_channel(session_id, c) for c in (Channel.USER, Channel.AGENT)}
        mix, rate = mix_channels(sides[Channel.USER], sides[Channel.AGENT])
        path = contained(out, f"{stem}.stereo.{fmt}")
        sf.write(path, mix, rate, format=AUDIO_FORMATS[fmt], subtype=subtype)
        written.append(path)
        for channel, audio in sides.items():
            path = contained(out, f"{stem}.{channel}.{fmt}")
            sf.write(path, audio.samples, audio.sample_rate, format=AUDIO_FORMATS[fmt],
                     subtype=subtype)  # fmt: skip
            written.append(path)
    elif fmt == "json":
        doc = {
            "session": {
                "session_id": session.session_id,
                "run_id": session.run_id,
                "scenario_name": session.scenario_name,
                "attempt": session.attempt,
                "status": str(session.status),
                "started_ns": session.started_ns,
                "ended_ns": session.ended_ns,
                "stop_reason": session.stop_reason,
                "clean_exit": session.clean_exit,
                "user_turns": session.user_turns,
                "agent_turns": session.agent_turns,
                "user_bot": session.user_bot,
                "agent_bot": session.agent_bot,
                "audio": session.audio,
            },
            "transcript": transcript(reader, session_id),
            "events": [
                {
                    "side": str(e.side),
                    "kind": str(e.kind),
                    "bridge_ns": e.bridge_ns,
                    "bot_ns": e.bot_ns,
                    "payload": e.payload,
                }
                for e in reader.events(session_id)
            ],
            "final_states": {
                str(side): {"state": fs.state, "state_hash": fs.state_hash, "context": fs.context}
                for side, fs in reader.final_states(session_id).items()
            },
        }
        path = contained(out, f"{stem}.json")
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False, default=str))
        written.append(path)
    else:
        raise ValueError(f"unknown export format {fmt!r} (wav, flac or json)")
    return written
