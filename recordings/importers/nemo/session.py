"""One attempt directory -> the records of one recorded session (no writing here).

Mapping (what cannot be mapped is kept raw as an artifact):

- ``conversation_log.wav`` (stereo PCM16: L = user->agent as delivered, R =
  agent->user) -> channels ``user`` and ``agent`` as ~1 s segments on the
  session clock; a WAV cut short is read as far as it goes.
- ``conversation_log.txt`` turn lines -> spoken transcripts at their times;
  its ``Start Time`` anchors the session; ``Stop reason`` the ending
  (``[EXIT]`` -> ``end_tool``, ``[TIMEOUT]`` -> ``max_duration``; any other
  string is kept as it is, reads unfinished and is a listed problem).
- ``metrics.json`` -> stop reason, clean exit, turn counts, token usage
  (per-side totals spread over ``n_calls`` events so sums and call counts
  match), its latencies as metrics; turns when the log has none. Every field
  is type-checked first (``nemo_types``): a wrong type is a listed problem
  and the field is ignored, never coerced.
- An attempt that crashed or was killed (``__KILLED__``, moved aside by a
  resume, no ``metrics.json``, or a WAV cut short) ends ``attempt_crashed``:
  unfinished, never a clean exit, so a rescore leaves it unscored and a
  resume runs it again.
- ``final_agent_response.json`` (``[{"actions": [...]}]`` or a plain list) ->
  write-action tool calls with their ``side`` tags.
- ``final_scenario_db_hash.txt`` -> final-state hashes (the DB itself was
  never written, so the state stays NULL); ``bot_logs_*/llm_context.json`` ->
  each side's context (JSON or a Python repr; empty stays empty).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vae.recordings.audio import SegmentBuilder
from vae.recordings.importers.nemo.events import action_payloads, usage_payloads
from vae.recordings.importers.nemo.files import (
    ConversationLog,
    WavData,
    parse_conversation_log,
    parse_time_ns,
    read_context,
    read_db_hashes,
    read_json,
    read_text,
    read_wav,
)
from vae.recordings.importers.nemo.records import check_metrics
from vae.recordings.models import (
    Channel,
    EventKind,
    EventRecord,
    FinalStateRecord,
    SegmentRecord,
    Side,
)
from vae.recordings.stop_reasons import is_finished

#: Raw files kept beside the session as artifacts (name -> size limit in bytes).
RAW_FILES = {
    "metrics.json": 5_000_000,
    "judge_result.json": 5_000_000,
    "conversation_log.seglst.json": 5_000_000,
    "conversation_log.txt": 5_000_000,
    "bridge_log.txt": 5_000_000,
    "trace_metrics.json": 5_000_000,
}
STOP_REASONS = {"[EXIT]": "end_tool", "[TIMEOUT]": "max_duration"}


CRASHED = "attempt_crashed"


@dataclass
class AttemptData:
    started_ns: int
    #: When the attempt ended: always set by :func:`read_attempt` (crashed or not).
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


def read_attempt(
    path: Path, session_id: str, fallback_start_ns: int, *, killed: bool = False
) -> AttemptData:
    problems: list[str] = []

    def note(problem: str) -> None:
        if problem:
            problems.append(problem)

    log_text, p = read_text(path / "conversation_log.txt")
    note(p)
    log = parse_conversation_log(log_text) if log_text else ConversationLog(turns=[])
    metrics, p = read_json(path / "metrics.json")
    note(p)
    if metrics is not None and not isinstance(metrics, dict):
        note("metrics.json: not an object")
        metrics = None
    if metrics is not None:
        metrics, wrong = check_metrics(metrics)
        problems.extend(wrong)
    started = parse_time_ns(log.start_time) or _first_turn_ns(metrics) or fallback_start_ns
    data = AttemptData(started_ns=started, metrics=metrics, problems=problems)
    wav, p = read_wav(path / "conversation_log.wav")
    note(p)
    duration_s = _audio(data, wav, session_id)
    _transcripts(data, log, metrics, session_id)
    crash = [
        why
        for cond, why in (
            (killed, "killed (__KILLED__ marker or moved aside by a resume)"),
            (metrics is None, "no usable metrics.json"),
            (wav is not None and wav.truncated, "conversation_log.wav cut short"),
        )
        if cond
    ]
    if crash or metrics is None:
        _crashed(data, "; ".join(crash), duration_s)
    else:
        _ending(data, log, metrics, duration_s, session_id)
    _actions(data, path, session_id)
    _tokens_and_latency(data, metrics, session_id)
    _final_states(data, path, session_id)
    for name, limit in RAW_FILES.items():
        raw, p = read_text(path / name)
        note(p)
        if raw is not None and len(raw.encode()) <= limit:
            data.artifacts[name] = raw
        elif raw is not None:
            note(f"{name}: {len(raw.encode())} bytes, too large to keep; not imported")
    data.events.sort(key=lambda e: e.bridge_ns)
    return data


def _first_turn_ns(metrics: dict[str, Any] | None) -> int | None:
    turns = (metrics or {}).get("turns")
    if isinstance(turns, list) and turns and isinstance(turns[0], dict):
        return parse_time_ns(turns[0].get("timestamp"))
    return None


def _audio(data: AttemptData, wav: WavData | None, session_id: str) -> float:
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


def _event(
    data: AttemptData, session_id: str, side: str, kind: EventKind, at_s: float, payload: Any
) -> None:
    at_ns = data.started_ns + int(max(0.0, at_s) * 1e9)
    data.events.append(EventRecord(session_id, Side(side), kind, at_ns, payload, bot_ns=0))


def _transcripts(
    data: AttemptData, log: ConversationLog, metrics: dict[str, Any] | None, session_id: str
) -> None:
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
        _event(data, session_id, t.role, EventKind.TRANSCRIPT, t.end_s, payload)
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
            _event(data, session_id, str(item["role"]), EventKind.TRANSCRIPT, at_s, payload)
            counted.append(str(item["role"]))
    data.user_turns = counted.count("user")
    data.agent_turns = counted.count("agent")


def _crashed(data: AttemptData, why: str, duration_s: float) -> None:
    data.crashed = why
    data.stop_reason = CRASHED
    data.stop_detail = f"the imported attempt crashed or was killed: {why}"
    data.clean_exit = False
    data.ended_ns = data.started_ns + int(max(0.0, duration_s) * 1e9)
    data.problems.append(f"attempt crashed or was killed ({why}): imported as unfinished")


def _ending(
    data: AttemptData,
    log: ConversationLog,
    metrics: dict[str, Any],
    duration_s: float,
    session_id: str,
) -> None:
    raw = str(metrics.get("stop_reason") or log.stop_reason or "")
    # A stop string the table does not know is kept as it was: it reads unfinished
    # (vae.recordings.stop_reasons), never a verdict on the agent.
    data.stop_reason = STOP_REASONS.get(raw, raw[:100] or "unspecified")
    data.stop_detail = f"imported stop reason {raw or '(none)'}"
    if not is_finished(data.stop_reason):
        what = f"stop reason {raw!r} is not one vae knows" if raw else "no stop reason recorded"
        data.problems.append(
            f"{what}: imported unfinished (unscored, its verdicts not imported;"
            " vae run --resume runs it again)"
        )
    clean = metrics.get("clean_exit")
    data.clean_exit = clean if isinstance(clean, bool) else raw == "[EXIT]"
    if duration_s <= 0:
        for key in ("duration_seconds", "scenario_duration"):
            value = metrics.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                duration_s = float(value)
                break
    data.ended_ns = data.started_ns + int(duration_s * 1e9)
    if raw == "[EXIT]":
        _event(
            data,
            session_id,
            "agent",
            EventKind.END_CONVERSATION,
            duration_s,
            {"kind": "agent_end_tool", "reason": "imported [EXIT]"},
        )


def _actions(data: AttemptData, path: Path, session_id: str) -> None:
    value, problem = read_json(path / "final_agent_response.json")
    if problem:
        data.problems.append(problem)
    if value is None:
        return
    at_s = max(0.0, (data.ended_ns - data.started_ns) / 1e9)
    try:
        for side, payload in action_payloads(value):
            _event(data, session_id, side, EventKind.TOOL_CALL, at_s, payload)
    except ValueError as exc:
        data.problems.append(f"final_agent_response.json: {exc}")


def _tokens_and_latency(data: AttemptData, metrics: dict[str, Any] | None, session_id: str) -> None:
    for side, kind, payload in usage_payloads(metrics or {}):
        _event(data, session_id, side, kind, 0.0, payload)


def _final_states(data: AttemptData, path: Path, session_id: str) -> None:
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


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)
