"""Recordings of "real" calls, made in the test: stereo and mono-pair files with sidecars.

Speech is the deterministic buzz voice of the reference bots, placed at known
times on each side, with exact silence between turns (a clean line).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from vae.bots.sound.speech import BuzzSynthesiser

RATE = 16000
#: (side, start_s, text): agent greets, caller asks, agent answers, caller says bye, agent ends.
TURNS = [
    ("agent", 0.3, "Hello, how can I help?"),
    ("user", 2.0, "Move booking one to March twenty."),
    ("agent", 4.6, "Done, it is moved."),
    ("user", 6.2, "Thanks, bye."),
    ("agent", 7.4, "Goodbye."),
]
SECONDS = 9.0


def call_channels(rate: int = RATE) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]]]:
    """(caller, agent) int16 channels and the matching transcript segments."""
    synth = BuzzSynthesiser(rate)
    n = int(SECONDS * rate)
    chans = {"user": np.zeros(n, dtype=np.int16), "agent": np.zeros(n, dtype=np.int16)}
    segments = []
    for side, start, text in TURNS:
        pcm = synth.synthesise(text)
        a = int(start * rate)
        chans[side][a : a + len(pcm)] = pcm
        speaker = "caller" if side == "user" else "agent"
        segments.append({"speaker": speaker, "text": text, "start": start,
                         "end": round(start + len(pcm) / rate, 3)})  # fmt: skip
    return chans["user"], chans["agent"], segments


def scenario_doc() -> dict[str, Any]:
    return {
        "domain": "airline",
        "reference_answer": {"tool": "change_flight", "booking_id": "B1", "new_date": "2026-03-20"},
        "expected_scenario_db": {"bookings": {"B1": {"date": "2026-03-20"}}},
        "initial_state": {"bookings": {"B1": {"date": "2026-03-18"}}},
        "nl_assertions": ["The agent confirms the change."],
        "success_signals": ["ACTION_MATCH", "DB_STATE_MATCH", "CLEAN_EXIT"],
        "agent": {
            "resources": {"tools": {"change_flight": {"booking_id": "id", "new_date": "date"}}},
            "tool_effects": {
                "change_flight": [
                    {"op": "set", "path": "bookings.{booking_id}.date", "value": "$args.new_date"}
                ]
            },
        },
    }


def write_stereo(path: Path, *, caller_right: bool = False, fmt: str = "WAV") -> None:
    user, agent, _ = call_channels()
    cols = (agent, user) if caller_right else (user, agent)
    sf.write(str(path), np.stack(cols, axis=1), RATE, format=fmt, subtype="PCM_16")


def write_pair(directory: Path, name: str, fmt: str = "FLAC") -> None:
    user, agent, _ = call_channels()
    ext = fmt.lower()
    sf.write(str(directory / f"{name}.user.{ext}"), user, RATE, format=fmt, subtype="PCM_16")
    sf.write(str(directory / f"{name}.agent.{ext}"), agent, RATE, format=fmt, subtype="PCM_16")


def write_sidecars(directory: Path, name: str) -> None:
    _, _, segments = call_channels()
    (directory / f"{name}.transcript.json").write_text(json.dumps(segments))
    (directory / f"{name}.scenario.json").write_text(json.dumps(scenario_doc()))
