"""An attempt's records as read so far, and how each of its files becomes some of them.

:class:`AttemptData` is what one attempt directory yields (no writing here);
:mod:`vae.recordings.importers.nemo.session` reads the directory, decides how
the attempt ended and calls these mappers, one per file the framework writes.
They change with the framework's file formats; each keeps what it cannot map
as a listed problem, never an error:

- ``conversation_log.wav`` (stereo PCM16: L = user->agent as delivered, R =
  agent->user) -> channels ``user`` and ``agent`` as ~1 s segments on the
  session clock; a WAV cut short is read as far as it goes.
- ``conversation_log.txt`` turn lines -> spoken transcripts at their times;
  ``metrics.json`` turns when the log has none; the turn counts.
- ``final_agent_response.json`` (``[{"actions": [...]}]`` or a plain list) ->
  write-action tool calls with their ``side`` tags.
- ``metrics.json`` token usage (per-side totals spread over ``n_calls``
  events so sums and call counts match) and its latencies as metrics.
- ``final_scenario_db_hash.txt`` -> final-state hashes (the DB itself was
  never written, so the state stays NULL); ``bot_logs_*/llm_context.json`` ->
  each side's context (JSON or a Python repr; empty stays empty).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vae.recordings.audio import SegmentBuilder
from vae.recordings.importers.nemo.events import action_payloads, usage_payloads
from vae.recordings.importers.nemo.files import (
    ConversationLog,
    WavData,
    parse_time_ns,
    read_context,
    read_db_hashes,
    read_json,
)
from vae.recordings.models import (
    Channel,
    EventKind,
    EventRecord,
    FinalStateRecord,
    SegmentRecord,
    Side,
)


@dataclass
class AttemptData:
    """What one attempt directory yields: its session's records and the problems met."""

    started_ns: int
    #: When the attempt ended: always set by
    #: :func:`~vae.recordings.importers.nemo.session.read_attempt` (crashed or not).
    ended_ns: int = 0
    stop_reason: str = ""
    stop_detail: str = ""
    clean_exit: bool | None = None
    user_turns: int = 0
    agent_turns: int = 0
    audio: dict[str, object] = field(default_factory=dict)
    segments: list[SegmentRecord] = field(default_factory=list)
    events: list[EventRecord] = field(default_factory=list)
    final_states: list[FinalStateRecord] = field(default_factory=list)
    artifacts: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)
    #: Why the attempt counts as crashed ("" when it finished).
    crashed: str = ""


def add_event(
    data: AttemptData, session_id: str, side: str, kind: EventKind, at_s: float, payload: Any
) -> None:
    """One event ``at_s`` seconds into the attempt."""
    at_ns = data.started_ns + int(max(0.0, at_s) * 1e9)
    data.events.append(EventRecord(session_id, Side(side), kind, at_ns, payload, bot_ns=0))


def add_audio(data: AttemptData, wav: WavData | None, session_id: str) -> float:
    """The WAV's two channels as segments; return the audio's length in seconds."""
    if wav is None:
        if "conversation_log.wav" not in " ".join(data.problems):
            data.problems.append("conversation_log.wav missing: no audio")
        return 0.0
    if wav.truncated:
        data.problems.append(
            f"conversation_log.wav cut short: {wav.frames} of"
            f" {wav.declared_frames} frames present; imported what is there"
        )
    if wav.channels != 2:
        data.problems.append(
            f"conversation_log.wav has {wav.channels} channel(s), expected stereo"
            " (L user, R agent): audio not imported"
        )
        return wav.frames / wav.sample_rate
    rate = wav.sample_rate
    for column, channel in ((0, Channel.USER), (1, Channel.AGENT)):
        builder = SegmentBuilder(session_id, channel, rate)
        pcm = wav.samples[:, column].astype("<i2")
        for seq, offset in enumerate(range(0, len(pcm), rate)):
            chunk = pcm[offset : offset + rate].tobytes()
            arrival = data.started_ns + offset * 1_000_000_000 // rate
            data.segments.extend(builder.add(chunk, offset, seq, arrival))
        data.segments.extend(builder.close())
    data.audio = {
        "rates": {"user": rate, "agent": rate},
        "imported_from": "conversation_log.wav",
        "note": "L = user->agent as delivered (after resampling and noise), R = agent->user;"
        " one stereo mix on the framework's clock, not per-bot send timing",
        "truncated": wav.truncated,
    }
    return wav.frames / rate


def add_transcripts(
    data: AttemptData, log: ConversationLog, metrics: dict[str, Any] | None, session_id: str
) -> None:
    """The spoken turns (the log's, else ``metrics.json``'s) and each side's turn count."""
    turns = log.turns or []
    for t in turns:
        payload = {
            "kind": "spoken",
            "text": t.text,
            "is_final": True,
            "start_s": t.start_s,
            "end_s": t.end_s,
            "source": "conversation_log.txt",
        }
        add_event(data, session_id, t.role, EventKind.TRANSCRIPT, t.end_s, payload)
    counted = [t.role for t in turns]
    metric_turns = (metrics or {}).get("turns")
    if not turns and isinstance(metric_turns, list):
        for item in metric_turns:
            if not isinstance(item, dict) or item.get("role") not in ("user", "agent"):
                continue
            at_ns = parse_time_ns(item.get("timestamp"))
            at_s = 0.0 if at_ns is None else (at_ns - data.started_ns) / 1e9
            payload = {
                "kind": "spoken",
                "text": str(item.get("text", "")),
                "is_final": True,
                "source": "metrics.json",
            }
            add_event(data, session_id, str(item["role"]), EventKind.TRANSCRIPT, at_s, payload)
            counted.append(str(item["role"]))
    data.user_turns = counted.count("user")
    data.agent_turns = counted.count("agent")


def add_actions(data: AttemptData, path: Path, session_id: str) -> None:
    """The agent's final actions as tool calls at the attempt's end."""
    value, problem = read_json(path / "final_agent_response.json")
    if problem:
        data.problems.append(problem)
    if value is None:
        return
    at_s = max(0.0, (data.ended_ns - data.started_ns) / 1e9)
    try:
        for side, payload in action_payloads(value):
            add_event(data, session_id, side, EventKind.TOOL_CALL, at_s, payload)
    except ValueError as exc:
        data.problems.append(f"final_agent_response.json: {exc}")


def add_usage(data: AttemptData, metrics: dict[str, Any] | None, session_id: str) -> None:
    """Token usage and latencies from ``metrics.json``."""
    for side, kind, payload in usage_payloads(metrics or {}):
        add_event(data, session_id, side, kind, 0.0, payload)


def add_final_states(data: AttemptData, path: Path, session_id: str) -> None:
    """Each side's final-state hash and LLM context, where the attempt left one."""
    hashes, problem = read_db_hashes(path / "final_scenario_db_hash.txt")
    if problem:
        data.problems.append(problem)
    received = data.ended_ns
    for side, hash_key in (("agent", "db_hash"), ("user", "user_db_hash")):
        context, problem = read_context(path / f"bot_logs_{side}" / "llm_context.json")
        if problem:
            data.problems.append(problem)
        if context == []:
            data.problems.append(f"bot_logs_{side}/llm_context.json is empty")
        digest = (hashes or {}).get(hash_key)
        wanted = side == "agent" and data.metrics is not None
        if digest is None and context is None and not wanted:
            continue
        data.final_states.append(
            FinalStateRecord(session_id, Side(side), received, None, digest, context)
        )
