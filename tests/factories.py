"""Synthetic recorded runs, written straight into a store file.

Scorer and report tests need recordings with *known* content — speech at known
times on both channels, tool calls, transcripts, token usage, final states —
without running the bridge. Everything here goes through ``vae.recordings.write.writer``
exactly as the bridge would, so the readers see ordinary recordings.

Function API (stable; the reports tests import it too)::

    turns = [Turn("agent", 0.5, 2.0, "Hello, how can I help?"),
             Turn("user", 2.6, 4.0, "I want to book a table")]
    spec = SessionSpec("book_table", turns=turns,
                       tool_calls=[ToolCallSpec("book", {"name": "Ann"}, at_s=3.0)],
                       agent_state={"bookings": [{"name": "Ann"}]})
    info = write_run_sync(db_path, [scenario("book_table", reference_answer={"name": "Ann"})],
                          [spec])
    info.run_id, info.session_ids["book_table"]  # ids to score / report

- :func:`scenario` builds a valid scenario document (``scenario_from_dict``
  accepts it) with sensible defaults; pass any scenario field as a keyword.
- :class:`SessionSpec` describes one recorded attempt; :class:`Turn` one span
  of speech (tone on that side's channel from ``start_s`` to ``end_s``, plus a
  spoken transcript, TTS speech boundaries and, for agent turns, a token-usage
  event). Times are seconds from the session start, on the bridge clock.
- :func:`write_run` (async) / :func:`write_run_sync` write a run, its frozen
  scenarios and the sessions; they return a :class:`RunInfo`.

Recorded event payloads (the convention the scorer reads)::

    transcript       {"kind": "spoken"|"heard", "text": str, "is_final": bool}
                     (``Turn.heard``: the other side's heard transcript of the turn)
    tool_call        {"call_id", "name", "arguments": {...}, "result": any,
                      "error": str, "side": "agent"|"user", "is_write": bool}
    token_usage      {"model": str, "prompt_tokens": int, "completion_tokens": int}
    speech_started / speech_stopped  {"source": "tts"|"vad", "sample_offset": int}
    metric           {"name": str, "value": float, "unit": str, "component": str}
    end_conversation {"kind": "agent_end_tool"|"user_hang_up", "reason": str}

Audio is only written while a side speaks (a bot that sends nothing between
turns); each speech span's first frame is stamped with its exact arrival time
and its offset jumps on the sender's clock, so ``read_channel`` places it to
the sample.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vae.recordings.audio import SegmentBuilder
from vae.recordings.canonical import state_hash
from vae.recordings.models import (
    Channel,
    EventKind,
    EventRecord,
    FinalStateRecord,
    RunRecord,
    RunScenario,
    RunStatus,
    SessionRecord,
    SessionStatus,
    Side,
)
from vae.recordings.write.writer import open_writer

#: 2024-06-01T10:00:00Z, so ids and times are stable across test runs.
BASE_NS = 1_717_236_000_000_000_000
FRAME_MS = 20


@dataclass
class Turn:
    """``side`` speaks from ``start_s`` to ``end_s`` (seconds from the session start)."""

    side: str
    start_s: float
    end_s: float
    text: str = ""
    #: Tone amplitude (0..1 of full scale); 0 writes digital silence for the span.
    amplitude: float = 0.3
    #: What the other side reported hearing of this turn (a heard transcript 0.3 s
    #: after it ends); None: it reported nothing.
    heard: str | None = None


@dataclass
class ToolCallSpec:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    at_s: float = 0.0
    result: Any = None
    error: str = ""
    side: str = "agent"
    is_write: bool = True


@dataclass
class SessionSpec:
    """One recorded attempt of one scenario."""

    scenario_name: str
    turns: list[Turn] = field(default_factory=list)
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    #: Final states; ``None`` means that side sent no final state.
    agent_state: dict[str, Any] | None = field(default_factory=dict)
    user_state: dict[str, Any] | None = None
    agent_context: Any = None
    user_context: Any = None
    #: Stored stop reason: end_tool, user_hang_up, inactivity_timeout, max_duration, ...
    stop_reason: str = "end_tool"
    #: ``None``: derived (True when stop_reason is end_tool).
    clean_exit: bool | None = None
    #: ``None``: counted from ``turns``.
    agent_turns: int | None = None
    user_turns: int | None = None
    attempt: int = 1
    #: ``None``: last turn's end + 1 s.
    duration_s: float | None = None
    sample_rate: int = 16000
    #: Bot-reported metrics: (at_s, side, name, value, unit, component).
    metrics: list[tuple[float, str, str, float, str, str]] = field(default_factory=list)
    #: Tokens per agent (and user) turn: (prompt, completion). None: no token events.
    tokens_per_turn: tuple[int, int] | None = (100, 20)
    superseded: bool = False
    #: Also write silence between turns (a continuous open-mic sender).
    continuous_audio: bool = False
    session_id: str | None = None
    #: Seconds after the run's start at which this session starts.
    start_offset_s: float = 0.0
    #: The agent bot's Join info (default ``{"name": "synthetic-agent"}``).
    agent_bot: dict[str, Any] | None = None
    #: More events as recorded: (at_s, side, kind, payload), e.g. a tool backend's calls.
    events: list[tuple[float, str, EventKind, dict[str, Any]]] = field(default_factory=list)


@dataclass
class RunInfo:
    run_id: str
    #: scenario name -> session id of its latest attempt
    session_ids: dict[str, str]
    #: every session id written, in order
    all_session_ids: list[str]


def scenario(name: str, domain: str = "restaurant", **fields: Any) -> dict[str, Any]:
    """A valid frozen scenario document; keyword arguments set any scenario field."""
    doc: dict[str, Any] = {
        "name": name,
        "domain": domain,
        "description": f"synthetic scenario {name}",
        "user": {"persona": {"name": "Ann"}, "task": {"goal": "book a table"}},
        "agent": {"persona": {"name": "Host"}, "task": {"goal": "take bookings"}},
        "success_signals": ["ACTION_MATCH", "CLEAN_EXIT"],
    }
    doc.update(fields)
    return doc


def speech(seconds: float, rate: int, amplitude: float, freq: float = 220.0) -> np.ndarray:
    t = np.arange(round(seconds * rate)) / rate
    return (np.sin(2 * np.pi * freq * t) * amplitude * 32767).astype("<i2")


def _ns(t0: int, s: float) -> int:
    return t0 + round(s * 1e9)


def _audio_segments(spec: SessionSpec, session_id: str, side: str, t0: int) -> list[Any]:
    """Segments of one side's channel: tone during that side's turns."""
    rate = spec.sample_rate
    frame = rate * FRAME_MS // 1000
    builder = SegmentBuilder(session_id, Channel(side), rate)
    segments = []
    seq = 0
    spans = [(t.start_s, t.end_s, t.amplitude) for t in spec.turns if t.side == side]
    if spec.continuous_audio:
        end = spec.duration_s or max((t.end_s for t in spec.turns), default=0.0) + 1.0
        signal = np.zeros(round(end * rate), dtype="<i2")
        for start, stop, amp in spans:
            a, b = round(start * rate), round(stop * rate)
            signal[a:b] = speech((b - a) / rate, rate, amp)
        spans_pcm = [(0, signal)]
    else:
        spans_pcm = [
            (round(s * rate), speech(round(e * rate) / rate - round(s * rate) / rate, rate, a))
            for s, e, a in spans
        ]
    for start_sample, pcm in spans_pcm:
        for i in range(0, len(pcm), frame):
            chunk = pcm[i : i + frame]
            offset = start_sample + i
            arrival = t0 + round(offset * 1e9 / rate)
            segments.extend(builder.add(chunk.tobytes(), offset, seq, arrival))
            seq += 1
        segments.extend(builder.close())
    return segments


def _events(spec: SessionSpec, session_id: str, t0: int) -> list[EventRecord]:
    ev: list[EventRecord] = []

    def add(side: str, kind: EventKind, at_s: float, payload: dict[str, Any]) -> None:
        ns = _ns(t0, at_s)
        ev.append(EventRecord(session_id, Side(side), kind, ns, payload, bot_ns=ns))

    for turn in spec.turns:
        rate = spec.sample_rate
        add(
            turn.side,
            EventKind.SPEECH_STARTED,
            turn.start_s,
            {"source": "tts", "sample_offset": round(turn.start_s * rate)},
        )
        add(
            turn.side,
            EventKind.SPEECH_STOPPED,
            turn.end_s,
            {"source": "tts", "sample_offset": round(turn.end_s * rate)},
        )
        add(
            turn.side,
            EventKind.TRANSCRIPT,
            turn.end_s,
            {"kind": "spoken", "text": turn.text, "is_final": True},
        )
        if turn.heard is not None:
            listener = "agent" if turn.side == "user" else "user"
            heard = {"kind": "heard", "text": turn.heard, "is_final": True}
            add(listener, EventKind.TRANSCRIPT, turn.end_s + 0.3, heard)
        if spec.tokens_per_turn is not None:
            prompt, completion = spec.tokens_per_turn
            add(
                turn.side,
                EventKind.TOKEN_USAGE,
                turn.start_s,
                {"model": "synthetic", "prompt_tokens": prompt, "completion_tokens": completion},
            )
    for i, call in enumerate(spec.tool_calls):
        add(
            call.side,
            EventKind.TOOL_CALL,
            call.at_s,
            {
                "call_id": f"call-{i}",
                "name": call.name,
                "arguments": call.arguments,
                "result": call.result,
                "error": call.error,
                "side": call.side,
                "is_write": call.is_write,
            },
        )
    for at_s, side, kind, payload in spec.events:
        add(side, kind, at_s, payload)
    for at_s, side, name, value, unit, component in spec.metrics:
        add(
            side,
            EventKind.METRIC,
            at_s,
            {"name": name, "value": value, "unit": unit, "component": component},
        )
    end_s = _duration(spec)
    if spec.stop_reason in ("end_tool", "user_hang_up"):
        kind = "agent_end_tool" if spec.stop_reason == "end_tool" else "user_hang_up"
        side = "agent" if spec.stop_reason == "end_tool" else "user"
        add(side, EventKind.END_CONVERSATION, max(0.0, end_s - 0.5), {"kind": kind, "reason": ""})
    ev.sort(key=lambda e: e.bridge_ns)
    return ev


def _duration(spec: SessionSpec) -> float:
    if spec.duration_s is not None:
        return spec.duration_s
    return max((t.end_s for t in spec.turns), default=0.0) + 1.0


async def write_session(writer: Any, run_id: str, spec: SessionSpec, t0: int) -> str:
    """Write one session (record, audio, events, final states, end) and return its id."""
    session_id = spec.session_id or f"{run_id}/{spec.scenario_name}/{spec.attempt}"
    await writer.start_session(
        SessionRecord(
            session_id=session_id,
            run_id=run_id,
            scenario_name=spec.scenario_name,
            attempt=spec.attempt,
            status=SessionStatus.RUNNING,
            started_ns=t0,
            user_bot={"name": "synthetic-user"},
            agent_bot=spec.agent_bot or {"name": "synthetic-agent"},
            audio={"rates": {"user": spec.sample_rate, "agent": spec.sample_rate}},
        )
    )
    for side in ("user", "agent"):
        for seg in _audio_segments(spec, session_id, side, t0):
            await writer.add_segment(seg)
    await writer.add_events(_events(spec, session_id, t0))
    end_ns = _ns(t0, _duration(spec))
    for side, state, context in (
        (Side.AGENT, spec.agent_state, spec.agent_context),
        (Side.USER, spec.user_state, spec.user_context),
    ):
        if state is not None:
            await writer.put_final_state(
                FinalStateRecord(session_id, side, end_ns, state, state_hash(state), context)
            )
    count = {s: sum(1 for t in spec.turns if t.side == s) for s in ("user", "agent")}
    await writer.end_session(
        session_id,
        ended_ns=end_ns,
        stop_reason=spec.stop_reason,
        clean_exit=spec.stop_reason == "end_tool" if spec.clean_exit is None else spec.clean_exit,
        user_turns=count["user"] if spec.user_turns is None else spec.user_turns,
        agent_turns=count["agent"] if spec.agent_turns is None else spec.agent_turns,
    )
    if spec.superseded:
        await writer.mark_superseded(session_id, "re-run by a later attempt")
    return session_id


async def write_run(
    db_path: str | Path,
    scenarios: list[dict[str, Any]],
    sessions: list[SessionSpec],
    *,
    run_id: str = "2024-06-01T10-00-00",
    options: dict[str, Any] | None = None,
    created_ns: int = BASE_NS,
) -> RunInfo:
    """Write a completed run with ``scenarios`` (documents) and ``sessions``.

    ``options`` are the run options as recorded (e.g. ``end_policy``,
    ``min_agent_turns``, ``strict_match``).
    """
    ids: dict[str, str] = {}
    all_ids: list[str] = []
    async with open_writer(db_path) as writer:
        await writer.create_run(
            RunRecord(
                run_id=run_id,
                created_ns=created_ns,
                status=RunStatus.COMPLETED,
                vae_version="test",
                options=dict(options or {}),
                finished_ns=created_ns + 1,
            )
        )
        await writer.add_run_scenarios(
            [
                RunScenario(run_id, doc["name"], i, str(doc.get("domain", "default")), doc)
                for i, doc in enumerate(scenarios)
            ]
        )
        for spec in sessions:
            t0 = created_ns + round(spec.start_offset_s * 1e9)
            session_id = await write_session(writer, run_id, spec, t0)
            all_ids.append(session_id)
            if not spec.superseded:
                ids[spec.scenario_name] = session_id
        await writer.flush()
    return RunInfo(run_id=run_id, session_ids=ids, all_session_ids=all_ids)


def write_run_sync(
    db_path: str | Path,
    scenarios: list[dict[str, Any]],
    sessions: list[SessionSpec],
    **kwargs: Any,
) -> RunInfo:
    """:func:`write_run` for synchronous tests and scripts."""
    return asyncio.run(write_run(db_path, scenarios, sessions, **kwargs))


def conversation(
    n_exchanges: int, *, first_s: float = 0.5, turn_s: float = 1.5, latency_s: float = 0.6
) -> list[Turn]:
    """Alternating agent/user turns: the agent greets, then user and agent take turns.

    Every gap between a turn's end and the next turn's start is ``latency_s``.
    """
    turns: list[Turn] = []
    t = first_s
    for i in range(n_exchanges * 2):
        side = "agent" if i % 2 == 0 else "user"
        turns.append(Turn(side, t, t + turn_s, f"{side} turn {i // 2}"))
        t += turn_s + latency_s
    return turns
