"""One attempt directory -> the records of one recorded session (no writing here).

This module reads the attempt's files and decides how it ended; what each
file maps to (audio, transcripts, tool calls, usage, final states) is
:mod:`vae.recordings.importers.nemo.attempt_records`. What cannot be mapped
is kept raw as an artifact (:data:`RAW_FILES`). How an attempt ends:

- ``conversation_log.txt``'s ``Start Time`` anchors the session (else the
  first ``metrics.json`` turn, else the run's start); ``Stop reason`` the
  ending (``[EXIT]`` -> ``end_tool``, ``[TIMEOUT]`` -> ``max_duration``; any
  other string is kept as it is, reads unfinished and is a listed problem).
- ``metrics.json`` -> stop reason, clean exit and duration. Every field is
  type-checked first (``nemo_types``): a wrong type is a listed problem and
  the field is ignored, never coerced.
- An attempt that crashed or was killed (``__KILLED__``, moved aside by a
  resume, no ``metrics.json``, or a WAV cut short) ends ``attempt_crashed``:
  unfinished, never a clean exit, so a rescore leaves it unscored and a
  resume runs it again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vae.recordings.importers.nemo.attempt_records import (
    AttemptData,
    add_actions,
    add_audio,
    add_event,
    add_final_states,
    add_transcripts,
    add_usage,
)
from vae.recordings.importers.nemo.files import (
    ConversationLog,
    parse_conversation_log,
    parse_time_ns,
    read_json,
    read_text,
    read_wav,
)
from vae.recordings.importers.nemo.records import check_metrics
from vae.recordings.models import EventKind
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


def read_attempt(
    path: Path, session_id: str, fallback_start_ns: int, *, killed: bool = False
) -> AttemptData:
    """The records of the attempt at ``path``, with every problem met reading it."""
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
    duration_s = add_audio(data, wav, session_id)
    add_transcripts(data, log, metrics, session_id)
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
    add_actions(data, path, session_id)
    add_usage(data, metrics, session_id)
    add_final_states(data, path, session_id)
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
        add_event(
            data,
            session_id,
            "agent",
            EventKind.END_CONVERSATION,
            duration_s,
            {"kind": "agent_end_tool", "reason": "imported [EXIT]"},
        )


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)
