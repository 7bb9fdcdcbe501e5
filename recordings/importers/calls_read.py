"""One checked call of ``vae import calls`` decoded into the rows of a session.

Why apart from :mod:`vae.recordings.importers.calls` (the run: checking
everything first, writing call after call, marking the run failed when a
call breaks): this is what one recording becomes — its two channels on one
clock, audio segments, turns found by voice activity
(:mod:`vae.recordings.vad`) as ``speech_started``/``speech_stopped`` events,
and the transcript sidecar's lines as spoken transcripts with their timed
words — and it changes with what vae can read from a recording, not with how
an import is run. No I/O but reading the call's audio files; audio broken past
a valid header raises :class:`~vae.recordings.importers.nemo.layout.ImportSourceError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from vae.recordings.audio import SegmentBuilder
from vae.recordings.importers.calls_files import CallFiles, CheckedCall
from vae.recordings.importers.nemo.layout import ImportSourceError, session_id_for
from vae.recordings.models import (
    Channel,
    EventKind,
    EventRecord,
    SegmentRecord,
    SessionRecord,
    SessionStatus,
    Side,
)
from vae.recordings.vad import spurts

NS = 1_000_000_000


@dataclass
class CallReport:
    """What one imported call came to (a row of ``vae import calls``'s report)."""

    name: str
    session_id: str
    files: list[str]
    duration_s: float
    user_turns: int
    agent_turns: int
    transcript_lines: int
    scenario: str  # "own" | "shared" | "none"


@dataclass
class CallRows:
    """One call as the rows it is stored as, and its line of the report."""

    report: CallReport
    scenario: dict[str, Any]
    session: SessionRecord
    segments: list[SegmentRecord]
    events: list[EventRecord]


def read_call(run_id: str, checked: CheckedCall, base: int, caller_channel: str) -> CallRows:
    """The rows of one checked call of run ``run_id``, its clock starting at ``base`` (ns)."""
    files, doc, kind, lines = checked.files, checked.scenario, checked.kind, checked.lines
    channels = _channels(files, caller_channel)
    sid = session_id_for(run_id, files.name, 1)
    segments: list[SegmentRecord] = []
    events: list[EventRecord] = []
    turns: dict[Side, int] = {}
    duration = 0.0
    rates: dict[str, int] = {}
    for side, (samples, rate) in channels.items():
        channel = Channel.USER if side is Side.USER else Channel.AGENT
        rates[str(channel)] = rate
        duration = max(duration, len(samples) / rate)
        segments.extend(_segments(sid, channel, samples, rate, base))
        found = spurts(samples, rate)
        turns[side] = len(found)
        for s in found:
            for kind_, at in (
                (EventKind.SPEECH_STARTED, s.start),
                (EventKind.SPEECH_STOPPED, s.end),
            ):
                payload = {"source": "vad", "sample_offset": at}
                events.append(EventRecord(sid, side, kind_, base + at * NS // rate, payload))
    for line in lines:
        payload = {
            "kind": "spoken",
            "text": line.text,
            "is_final": True,
            "start_s": line.start_s,
            "end_s": line.end_s,
            "source": "transcript sidecar",
        }
        if line.words:
            payload["words"] = [{"word": w, "start": a, "end": b} for w, a, b in line.words]
        at = base + int(line.end_s * NS)
        events.append(EventRecord(sid, Side(line.side), EventKind.TRANSCRIPT, at, payload))
    events.sort(key=lambda e: e.bridge_ns)
    audio: dict[str, object] = {"rates": rates, "imported_from": [str(p) for p in files.audio],
             "caller_channel": caller_channel if files.stereo else "file"}  # fmt: skip
    bot = {"name": "recorded-call", "imported": True}
    session = SessionRecord(sid, run_id, files.name, 1, SessionStatus.RUNNING, base,
                            user_bot=bot, agent_bot=bot, audio=audio)  # fmt: skip
    report = CallReport(files.name, sid, [str(p) for p in files.audio], round(duration, 3),
                        turns[Side.USER], turns[Side.AGENT], len(lines), kind)  # fmt: skip
    return CallRows(report, doc, session, segments, events)


def _channels(files: CallFiles, caller_channel: str) -> dict[Side, tuple[np.ndarray, int]]:
    if files.stereo is not None:
        data, rate = _read(files.stereo)
        user = 0 if caller_channel == "left" else 1
        return {
            Side.USER: (np.ascontiguousarray(data[:, user]), rate),
            Side.AGENT: (np.ascontiguousarray(data[:, 1 - user]), rate),
        }
    assert files.caller is not None and files.agent is not None
    out = {}
    for side, path in ((Side.USER, files.caller), (Side.AGENT, files.agent)):
        data, rate = _read(path)
        out[side] = (np.ascontiguousarray(data[:, 0]), rate)
    return out


def _read(path: Path) -> tuple[np.ndarray, int]:
    try:
        data, rate = sf.read(str(path), dtype="int16", always_2d=True)
    except (RuntimeError, sf.LibsndfileError) as exc:
        raise ImportSourceError(f"{path}: cannot decode ({exc})") from exc
    return np.asarray(data, dtype=np.int16), int(rate)


def _segments(
    sid: str, channel: Channel, samples: np.ndarray, rate: int, base: int
) -> list[SegmentRecord]:
    builder = SegmentBuilder(sid, channel, rate)
    out: list[SegmentRecord] = []
    for seq, offset in enumerate(range(0, len(samples), rate)):
        chunk = samples[offset : offset + rate].astype("<i2").tobytes()
        out.extend(builder.add(chunk, offset, seq, base + offset * NS // rate))
    out.extend(builder.close())
    return out
