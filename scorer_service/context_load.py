"""Loading a :class:`~vae.scorer_service.context.ScoringContext` from the store.

Apart from :mod:`vae.scorer_service.context` (its shape, what scorers
depend on) because this changes with how sessions are recorded: the event
payloads, the run options that stand in for the scoring's settings, the
audio channels read. It reads the store (blocking: call it in a thread).

Event payloads are read tolerantly (see ``tests/factories.py`` for the
convention): a tool call's arguments may be a mapping or a JSON string, sides
and kinds may be plain (``agent``) or enum spellings (``ROLE_AGENT``).
"""

from __future__ import annotations

import json
from typing import Any

from vae.recordings.models import Channel, EventKind, EventRecord, SessionRecord
from vae.recordings.read.bot_errors import bot_errors
from vae.recordings.read.reader import RecordingReader
from vae.recordings.scenarios.model import Scenario
from vae.scorer_service.backend_calls import backend_call
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.context import (
    BotMetric,
    KeyPress,
    ScoringContext,
    TokenTotals,
    ToolCallInfo,
    TranscriptLine,
)


def side_name(value: Any, default: str) -> str:
    text = str(value or "").lower()
    for name in ("user", "agent"):
        if text.endswith(name):
            return name
    return default


def _arguments(payload: dict[str, Any]) -> dict[str, Any]:
    args = payload.get("arguments")
    if args is None and payload.get("arguments_json"):
        try:
            args = json.loads(str(payload["arguments_json"]))
        except json.JSONDecodeError:
            args = {"_raw": payload["arguments_json"]}
    return args if isinstance(args, dict) else {"_value": args}


def _result(payload: dict[str, Any]) -> Any:
    if "result" in payload:
        return payload["result"]
    raw = payload.get("result_json")
    if not raw:
        return None
    try:
        return json.loads(str(raw))
    except json.JSONDecodeError:
        return raw


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _t(event: EventRecord, t0: int) -> float:
    return (event.bridge_ns - t0) / 1e9


def parse_events(ctx: ScoringContext, events: list[EventRecord]) -> None:
    """Fill the context's tool calls, transcripts, tokens and metrics from raw events."""
    t0 = ctx.session.started_ns
    for e in events:
        p = e.payload
        bot_side = str(e.side)
        if e.kind is EventKind.TOOL_CALL:
            args = _arguments(p)
            name = str(p.get("name", ""))
            action = p.get("action")
            ctx.tool_calls.append(
                ToolCallInfo(
                    side=side_name(p.get("side"), bot_side),
                    name=name,
                    arguments=args,
                    result=_result(p),
                    error=str(p.get("error") or ""),
                    is_write=bool(p.get("is_write", False)),
                    t_s=_t(e, t0),
                    action=dict(action) if isinstance(action, dict) else {"tool": name, **args},
                )
            )
        elif e.kind is EventKind.TRANSCRIPT:
            if not p.get("is_final", True):
                continue
            line = TranscriptLine(bot_side, _t(e, t0), str(p.get("text", "")))
            if "heard" in str(p.get("kind", "")).lower():
                ctx.heard.append(line)
                continue
            ctx.transcripts.append(line)
            ctx.bot_transcripts.append(line)
        elif e.kind is EventKind.TOOL_BACKEND_CALL:
            ctx.backend_calls.append(backend_call(p, _t(e, t0)))
        elif e.kind is EventKind.TOOL_BACKEND:
            ctx.tool_backend = ctx.tool_backend or p.get("event") == "started"
        elif e.kind is EventKind.DTMF:
            carried, why = str(p.get("carried_as", "")), str(p.get("not_delivered", ""))
            ctx.keys.append(KeyPress(bot_side, str(p.get("digits", "")), _t(e, t0), carried, why))
        elif e.kind is EventKind.TOKEN_USAGE:
            totals = ctx.tokens.setdefault(bot_side, TokenTotals())
            totals.calls += 1
            totals.prompt += _int(p.get("prompt_tokens"))
            totals.completion += _int(p.get("completion_tokens"))
        elif e.kind is EventKind.METRIC:
            value = p.get("value")
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                continue
            try:
                value = float(value)
            except ValueError:
                continue
            ctx.metrics.append(
                BotMetric(
                    bot_side,
                    str(p.get("name", "")),
                    value,
                    str(p.get("unit", "")),
                    str(p.get("component", "")),
                    _t(e, t0),
                )
            )


def load_context(
    reader: RecordingReader,
    session: SessionRecord,
    scenario: Scenario,
    config: ScoringConfig,
    run_options: dict[str, Any],
    *,
    with_audio: bool,
    channels: tuple[Channel, ...] = (Channel.USER, Channel.AGENT),
) -> ScoringContext:
    """Load everything the scorers need about ``session`` (blocking: call in a thread).

    ``channels``: the audio loaded when ``with_audio`` (the transcription stage
    also reads what was delivered to the agent).
    """
    strict = config.strict_match
    if strict is None:
        strict = bool(run_options.get("strict_match", False))
    min_turns = config.min_agent_turns
    if min_turns is None:
        min_turns = _int(run_options.get("min_agent_turns"))
    policy = config.end_policy or _policy_name(run_options.get("end_policy"))
    ctx = ScoringContext(
        session=session,
        scenario=scenario,
        domain=scenario.domain,
        strict_match=strict,
        min_agent_turns=min_turns,
        end_policy=policy,
        final_states=reader.final_states(session.session_id),
        mode=reader.session_mode(session.session_id),
    )
    parse_events(ctx, reader.events(session.session_id))
    ctx.bot_errors = bot_errors(reader, session.session_id)
    if with_audio and not ctx.mode.text:
        for channel in channels:
            ctx.audio[str(channel)] = reader.read_channel(session.session_id, channel)
    return ctx


def _policy_name(value: Any) -> str:
    text = str(value or "").lower().replace("_", "-")
    return "valid-terminal-state" if "valid-terminal" in text else "tool-only"
