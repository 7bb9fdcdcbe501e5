"""A recorded caller cut into turns, each with the cue that started it: what a replay plays.

Why this lives in the store layer: it is a pure reading of a recording (the
bridge's replay player, the tests and any tool that wants to know "what did
the caller say, and when" read the same answer).

From one recorded session:

- the **user line** is the ``user`` channel as the caller sent it; its talk
  spurts (:mod:`vae.recordings.vad`) are the user turns, sample-exact;
- the **heard line** is what the caller heard of the agent: ``to_user`` as the
  bridge delivered it, or the ``agent`` channel for imported calls. Its talk
  spurts, merged across pauses shorter than the gate silence, are the agent's
  turns, exactly as the replay player will detect them live.

Each user turn gets a cue (:class:`Gate`):

- ``barge_in``: the agent was speaking when the caller started, in an agent
  turn that began after the caller's previous turn began. Replayed at the same
  offset into the new agent's turn (``delay_s`` after its onset).
- ``after_agent``: the agent spoke since the caller's previous turn began and
  was quiet when the caller started. Replayed once the new agent's speech has
  ended and stayed quiet for the gate silence, or for the recording's own gap
  (``delay_s``) when that was longer. ``agent_after_previous`` says the
  recorded agent was still speaking after the caller's previous turn ended;
  the replay then waits for agent speech after the replayed turn ended too.
- ``after_user``: no agent speech to wait for (the caller spoke first, or twice
  in a row): ``delay_s`` after the previous turn ended (from the start for the
  first turn).

``reply_expected`` says the recorded agent spoke after the caller's last turn:
the replay then ends once the new agent's reply is over.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vae.recordings.errors import StoreError
from vae.recordings.models import Channel, EventKind, Side
from vae.recordings.read.reader import RecordingReader
from vae.recordings.vad import Spurt, VadSettings, spurts


class ReplayError(StoreError):
    """A session that cannot be replayed (no caller audio, no turns, not found)."""


class Gate(enum.StrEnum):
    AFTER_AGENT = "after_agent"
    BARGE_IN = "barge_in"
    AFTER_USER = "after_user"


@dataclass(frozen=True)
class ReplayTurn:
    index: int
    #: The turn's samples exactly as the caller sent them (int16 at the script's rate).
    samples: np.ndarray
    gate: Gate
    delay_s: float
    agent_after_previous: bool
    #: Where the turn sat in the recording, seconds from the session start.
    source_start_s: float
    source_end_s: float
    #: The caller's transcript payloads that belong to this turn, as recorded.
    transcripts: list[dict[str, Any]] = field(default_factory=list)
    #: Keys the caller pressed after this turn began and before the next one
    #: (its DTMF events: ``digits``, ``tone_ms``, ``gap_ms``), pressed again
    #: when the replayed turn ends.
    keys: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ReplayScript:
    run_id: str
    session_id: str
    scenario_name: str
    rate: int
    turns: list[ReplayTurn]
    reply_expected: bool


def load_script(
    reader: RecordingReader,
    session_id: str,
    *,
    gate_silence_s: float = 0.5,
    user_vad: VadSettings | None = None,
) -> ReplayScript:
    """Cut ``session_id``'s caller into replayable turns (blocking: call in a thread)."""
    session = reader.session(session_id)
    if session is None:
        raise ReplayError(f"no session {session_id!r} to replay")
    user = reader.read_channel(session_id, Channel.USER)
    if not np.any(user.samples):
        raise ReplayError(f"session {session_id}: no caller audio recorded (channel 'user')")
    heard = reader.read_channel(session_id, Channel.TO_USER)
    if not np.any(heard.samples):
        heard = reader.read_channel(session_id, Channel.AGENT)
    ru, rh = user.sample_rate, heard.sample_rate
    user_turns = spurts(user.samples, ru, user_vad or VadSettings())
    if not user_turns:
        raise ReplayError(f"session {session_id}: the caller never spoke (no talk spurt found)")
    agent = [
        (s.start / rh, s.end / rh)
        for s in spurts(heard.samples, rh, VadSettings(merge_gap_s=gate_silence_s))
    ]
    texts = _caller_transcripts(reader, session_id, session.started_ns)
    keys = _caller_keys(reader, session_id, session.started_ns)
    turns: list[ReplayTurn] = []
    prev: tuple[float, float] | None = None
    for i, spurt in enumerate(user_turns):
        us, ue = spurt.start / ru, spurt.end / ru
        gate, delay, after_prev = _cue(us, prev, agent)
        turns.append(
            ReplayTurn(
                index=i,
                samples=user.samples[spurt.start : spurt.end].copy(),
                gate=gate,
                delay_s=delay,
                agent_after_previous=after_prev,
                source_start_s=us,
                source_end_s=ue,
                transcripts=_belonging(texts, user_turns, i, ru),
                keys=_belonging(keys, user_turns, i, ru, first=i == 0),
            )
        )
        prev = (us, ue)
    last_start, last_end = prev if prev else (0.0, 0.0)
    reply = any(a_end > last_end and a_start > last_start for a_start, a_end in agent)
    return ReplayScript(session.run_id, session_id, session.scenario_name, ru, turns, reply)


def _cue(
    us: float, prev: tuple[float, float] | None, agent: list[tuple[float, float]]
) -> tuple[Gate, float, bool]:
    prev_start, prev_end = prev if prev else (-1.0, 0.0)
    for a_start, a_end in agent:
        if a_start <= us < a_end and a_start > prev_start:
            return Gate.BARGE_IN, us - a_start, False
    before = [(a, b) for a, b in agent if b <= us and a > prev_start]
    if before:
        a_start, a_end = before[-1]
        return Gate.AFTER_AGENT, us - a_end, a_end > prev_end
    return Gate.AFTER_USER, us - (prev_end if prev else 0.0), False


def _caller_transcripts(
    reader: RecordingReader, session_id: str, t0_ns: int
) -> list[tuple[float, dict[str, Any]]]:
    out = []
    for e in reader.events(session_id, [EventKind.TRANSCRIPT]):
        p = e.payload
        if e.side is not Side.USER or not p.get("is_final", True):
            continue
        if "heard" in str(p.get("kind", "")).lower():
            continue
        start = p.get("start_s")
        at = float(start) if isinstance(start, int | float) else (e.bridge_ns - t0_ns) / 1e9
        out.append((at, dict(p)))
    return out


def _caller_keys(
    reader: RecordingReader, session_id: str, t0_ns: int
) -> list[tuple[float, dict[str, Any]]]:
    """The caller's key presses (DTMF events) with their session times, as pressed."""
    out = []
    for e in reader.events(session_id, [EventKind.DTMF]):
        if e.side is Side.USER and e.payload.get("digits"):
            p: dict[str, Any] = {
                k: e.payload[k] for k in ("digits", "tone_ms", "gap_ms") if k in e.payload
            }
            out.append(((e.bridge_ns - t0_ns) / 1e9, p))
    return out


def _belonging(
    texts: list[tuple[float, dict[str, Any]]],
    turns: list[Spurt],
    i: int,
    rate: int,
    *,
    first: bool = False,
) -> list[dict[str, Any]]:
    """Transcripts of turn ``i``: stamped after it began and before the next one began.

    A bot reports what it said when it finished saying it, so the stamp falls
    at (or just after) the end of its turn; an imported sidecar gives the start.
    """
    lo = float("-inf") if first else turns[i].start / rate - 0.05
    hi = turns[i + 1].start / rate - 0.05 if i + 1 < len(turns) else float("inf")
    return [p for at, p in texts if lo <= at < hi]
