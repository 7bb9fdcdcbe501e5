"""Which audio to mask in a session, and the masked segments: from its words to its samples.

Personal data spoken in a call is in its transcripts (text) and in its audio.
Each transcript in which the redaction finds something is a *spoken unit*:
who spoke it, its text, its findings, and whatever says where it is in time —

1. timed words (``words: [{word, start, end}]``, seconds of the session, as an
   imported call's sidecar or a bot gives them): each finding masks the words
   it covers, padded (``method = words``);
2. the turn's times (``start_s``/``end_s``, or the bot's sample offsets on its
   own channel): the whole turn is masked (``method = turn``);
3. neither: the speaker's talk spurt nearest the transcript's time, found by
   voice activity (:mod:`vae.recordings.vad`), masked whole (``turn``).

A span is masked on the speaker's channel (``user``/``agent``, as sent) and,
widened for the bridge's buffering, on what the bridge delivered to the other
side (``to_agent``/``to_user``). Keys pressed that were personal data (a card
number keyed in) mask their tones on ``to_agent``. Every masked span is a
ledger entry; a finding that could be placed nowhere is one too (``none``),
so the report says what could not be masked. Segments keep their length,
offsets and frame index: the recording stays the same length and plays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from vae.recordings.audio import place_segments, segment_positions
from vae.recordings.models import (
    Channel,
    EventKind,
    EventRecord,
    SegmentRecord,
    TranscriptRecord,
)
from vae.recordings.redact.model import LedgerEntry, Redaction
from vae.recordings.vad import spurts

#: The bridge delivers a side's audio to the other after its jitter buffer and framing.
DELIVERY_BEFORE_S, DELIVERY_AFTER_S = 0.05, 0.5
#: A whole turn is padded by this much on each side.
TURN_PAD_S = 0.1
_DELIVERED = {"user": Channel.TO_AGENT, "agent": Channel.TO_USER}


@dataclass
class SpokenUnit:
    """A transcript with findings, and what places it in time."""

    speaker: str
    text: str
    found: list[Any]
    location: str
    at_s: float
    words: list[dict[str, Any]] = field(default_factory=list)
    start_s: float | None = None
    end_s: float | None = None
    #: (channel, first, last sample offset) on the reporting bot's own channel.
    offsets: tuple[str, int, int] | None = None
    #: Key presses: the seconds their tones last (masked on ``to_agent`` only).
    keys_s: float = 0.0


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def unit_of_event(event: EventRecord, started_ns: int, redaction: Redaction) -> SpokenUnit | None:
    """The spoken unit of a transcript or key-press event with findings (None: nothing)."""
    p = event.payload
    at_s = (event.bridge_ns - started_ns) / 1e9
    side = str(event.side)
    if event.kind is EventKind.DTMF and side == "user":
        digits = str(p.get("digits", ""))
        _, found = redaction.text(digits)
        if not found:
            return None
        per_key = ((_float(p.get("tone_ms")) or 100.0) + (_float(p.get("gap_ms")) or 100.0)) / 1e3
        return SpokenUnit("user", digits, list(found), "events.dtmf.digits", at_s,
                          keys_s=per_key * len(digits))  # fmt: skip
    if event.kind is not EventKind.TRANSCRIPT or side not in ("user", "agent"):
        return None
    text = str(p.get("text", ""))
    _, found = redaction.text(text)
    if not found:
        return None
    heard = "heard" in str(p.get("kind", "")).lower()
    speaker = ("agent" if side == "user" else "user") if heard else side
    unit = SpokenUnit(speaker, text, list(found), "events.transcript.text", at_s)
    raw = p.get("words")
    unit.words = [w for w in raw if isinstance(w, dict)] if isinstance(raw, list) else []
    unit.start_s, unit.end_s = _float(p.get("start_s")), _float(p.get("end_s"))
    first, last = p.get("start_sample_offset"), p.get("end_sample_offset")
    if isinstance(first, int) and isinstance(last, int) and 0 <= first < last:
        unit.offsets = (side, first, last)
    return unit


def redact_words(
    redaction: Redaction, text: str, words: list[Any], redacted: list[Any]
) -> list[Any]:
    """A transcript's timed words with those its findings cover as placeholders.

    ``redacted`` is the words list as :meth:`Redaction.value` left it (each word
    alone); a word is personal only in its line ("Annabel" after "my name is"),
    so the line's findings decide. A finding that cannot be placed among the
    words makes every word a placeholder: nothing of it may stay.
    """
    _, found = redaction.text(text)
    if not found:
        return redacted
    timed = [w for w in words if isinstance(w, dict)]
    out = [dict(w) if isinstance(w, dict) else w for w in redacted]
    for f, a, b in redaction.words(text, list(found), timed):
        for i, w in enumerate(words):
            if not isinstance(w, dict) or not isinstance(out[i], dict):
                continue
            start, end = _float(w.get("start")), _float(w.get("end"))
            inside = (
                a is None
                or b is None
                or (start is not None and end is not None and a - 1e-6 <= start and end <= b + 1e-6)
            )
            if inside:
                out[i]["word"] = f"<{f.entity}>"
    return out


def unit_of_transcript(row: TranscriptRecord, redaction: Redaction) -> SpokenUnit | None:
    """A transcription stage's turn with findings (its channel and times are known)."""
    _, found = redaction.text(row.text)
    if not found:
        return None
    speaker = {"user": "user", "agent": "agent", "to_agent": "user", "to_user": "agent"}.get(
        row.channel, "user"
    )
    return SpokenUnit(speaker, row.text, list(found), "transcripts.text", row.start_s,
                      start_s=row.start_s, end_s=row.end_s)  # fmt: skip


class _Timeline:
    """One channel's segments placed on the session clock."""

    def __init__(self, segments: Sequence[SegmentRecord], started_ns: int) -> None:
        self.segments = list(segments)
        self.rate = segments[0].sample_rate if segments else 16000
        self.positions = segment_positions(self.segments, started_ns)
        self.started_ns = started_ns

    def offset_s(self, offset: int) -> float | None:
        """Session seconds of a sample offset on the sender's clock (None: not recorded)."""
        for seg, pos in zip(self.segments, self.positions, strict=True):
            if seg.start_offset <= offset <= seg.start_offset + seg.sample_count:
                return (pos + offset - seg.start_offset) / self.rate
        return None

    def samples(self) -> np.ndarray:
        return place_segments(self.segments, self.started_ns)


def mask_session(
    redaction: Redaction,
    run_id: str,
    session_id: str,
    started_ns: int,
    segments: dict[str, list[SegmentRecord]],
    units: Sequence[SpokenUnit],
) -> tuple[list[SegmentRecord], list[LedgerEntry]]:
    """Every segment of the session (masked where the units say) and the ledger of the audio."""
    lines = {ch: _Timeline(segs, started_ns) for ch, segs in segments.items() if segs}
    spans: dict[str, list[tuple[float, float]]] = {}
    ledger: list[LedgerEntry] = []
    vad_cache: dict[str, list[tuple[float, float]]] = {}

    def add(channel: str, entity: str, a: float, b: float, method: str, note: str = "") -> None:
        if channel not in lines:
            return
        a = max(0.0, a)
        spans.setdefault(channel, []).append((a, b))
        ledger.append(LedgerEntry(run_id, session_id, "audio", entity, channel, a, b, method, note))

    for unit in units:
        for finding, a, b, method, note in _placed(unit, lines, redaction, vad_cache):
            if a is None or b is None:
                ledger.append(LedgerEntry(run_id, session_id, "audio", finding.entity, "",
                                          unit.at_s, unit.at_s, "none", note))  # fmt: skip
                continue
            if unit.keys_s:
                add(str(Channel.TO_AGENT), finding.entity, a, b, method, note)
                continue
            add(unit.speaker, finding.entity, a, b, method, note)
            delivered = str(_DELIVERED[unit.speaker])
            add(delivered, finding.entity, a - DELIVERY_BEFORE_S, b + DELIVERY_AFTER_S, method,
                note)  # fmt: skip
    out: list[SegmentRecord] = []
    for channel, line in lines.items():
        out.extend(_mask_line(line, spans.get(channel, []), redaction))
    for channel, segs in segments.items():
        if channel not in lines:
            out.extend(segs)
    return out, ledger


def _placed(
    unit: SpokenUnit,
    lines: dict[str, _Timeline],
    redaction: Redaction,
    vad_cache: dict[str, list[tuple[float, float]]],
) -> list[tuple[Any, float | None, float | None, str, str]]:
    """(finding, start_s, end_s, method, note) for each finding of ``unit``."""
    if unit.keys_s:
        return [(f, unit.at_s - 0.05, unit.at_s + unit.keys_s + 0.3, "keys", "keypad tones")
                for f in unit.found]  # fmt: skip
    out: list[tuple[Any, float | None, float | None, str, str]] = []
    left = list(unit.found)
    if unit.words:
        pad = redaction.pad_s
        left = []
        for f, a, b in redaction.words(unit.text, unit.found, unit.words):
            if a is None or b is None:
                left.append(f)
            else:
                out.append((f, a - pad, b + pad, "words", ""))
    if not left:
        return out
    turn, note = _turn(unit, lines, vad_cache)
    why = "no word timings: the whole turn was masked"
    if unit.words:
        why = "its words were not among the timed words: the whole turn was masked"
    for f in left:
        if turn is None:
            out.append((f, None, None, "none", note))
        else:
            out.append((f, turn[0] - TURN_PAD_S, turn[1] + TURN_PAD_S, "turn", f"{why}; {note}"))
    return out


def _turn(
    unit: SpokenUnit, lines: dict[str, _Timeline], vad_cache: dict[str, list[tuple[float, float]]]
) -> tuple[tuple[float, float] | None, str]:
    """The turn's span in session seconds, and how it was found."""
    if unit.start_s is not None and unit.end_s is not None and unit.end_s >= unit.start_s:
        return (unit.start_s, unit.end_s), "turn times from the transcript"
    if unit.offsets is not None and unit.offsets[0] in lines:
        channel, first, last = unit.offsets
        a, b = lines[channel].offset_s(first), lines[channel].offset_s(last)
        if a is not None and b is not None:
            return (a, b), "turn times from the bot's sample offsets"
    line = lines.get(unit.speaker)
    if line is None:
        return None, f"no {unit.speaker} audio was recorded"
    if unit.speaker not in vad_cache:
        rate = line.rate
        vad_cache[unit.speaker] = [(s.start / rate, s.end / rate)
                                   for s in spurts(line.samples(), rate)]  # fmt: skip
    found = vad_cache[unit.speaker]
    if not found:
        return None, f"no speech found on the {unit.speaker} channel"
    best = min(found, key=lambda s: (max(s[0] - unit.at_s, unit.at_s - s[1], 0.0), -s[1]))
    return best, "turn found by voice activity near the transcript's time"


def _mask_line(
    line: _Timeline, spans: list[tuple[float, float]], redaction: Redaction
) -> list[SegmentRecord]:
    if not spans:
        return line.segments
    rate = line.rate
    cuts = [(round(a * rate), round(b * rate)) for a, b in sorted(spans)]
    # Masked on the placed channel, so a tone runs on across segment edges unbroken.
    masked = redaction.mask(line.samples(), rate, cuts)
    out = []
    for seg, pos in zip(line.segments, line.positions, strict=True):
        n = seg.sample_count
        local = [(max(0, a - pos), min(n, b - pos)) for a, b in cuts if a < pos + n and b > pos]
        if not local:
            out.append(seg)
            continue
        samples = np.frombuffer(seg.pcm, dtype="<i2").copy()
        for la, lb in local:
            samples[la:lb] = masked[pos + la : pos + lb]
        out.append(replace(seg, pcm=samples.astype("<i2").tobytes()))
    return out
