"""Protobuf -> domain for the Converse stream: what a bot sends (Join, BotMessage).

Apart from :mod:`vae.bridge_service.edge.convert_out` (what the bridge sends)
because the two directions change for different reasons: this side follows
the messages bots may send and how strictly they are checked. One of the
modules touching ``*_pb2``.

Bot events become plain payload dicts in the recorded-event convention (see
``tests/factories.py``): JSON fields are parsed here, and a field that is not
valid JSON makes the event "malformed" (kept with the raw text, recorded as
such, the bot told by a notice) instead of failing the session.
"""

from __future__ import annotations

import json
from typing import Any

from vae import dtmf
from vae.bridge.v1 import bridge_pb2
from vae.bridge_service.config import MAX_RATE, MIN_RATE
from vae.bridge_service.connectors.base import (
    BotAudio,
    BotEvent,
    BotInfo,
    BotInput,
    BotProtocolError,
    FinalStatePart,
    JsonPiece,
)
from vae.bridge_service.edge.convert_tiers import tier_input
from vae.common.v1 import common_pb2
from vae.recordings import identifiers
from vae.recordings.models import EventKind, Side

ROLE_TO_SIDE = {common_pb2.ROLE_USER: Side.USER, common_pb2.ROLE_AGENT: Side.AGENT}
_END_KINDS = {
    common_pb2.END_KIND_AGENT_END_TOOL: "agent_end_tool",
    common_pb2.END_KIND_USER_HANG_UP: "user_hang_up",
    common_pb2.END_KIND_BOT_ERROR: "bot_error",
}


def audio_rate(fmt: common_pb2.AudioFormat, field: str) -> int:
    """The sample rate of an accepted format; BotProtocolError naming the field otherwise."""
    if fmt.encoding != common_pb2.AUDIO_ENCODING_PCM16LE:
        name = (
            common_pb2.AudioEncoding.Name(fmt.encoding)
            if fmt.encoding in (0, 1)
            else str(fmt.encoding)
        )
        raise BotProtocolError(f"{field}.encoding", f"{name} is not supported; send PCM16LE")
    if fmt.channels != 1:
        raise BotProtocolError(f"{field}.channels", f"{fmt.channels} channels; only mono (1)")
    if not MIN_RATE <= fmt.sample_rate_hz <= MAX_RATE:
        raise BotProtocolError(
            f"{field}.sample_rate_hz",
            f"{fmt.sample_rate_hz} Hz is outside {MIN_RATE}..{MAX_RATE}",
        )
    return int(fmt.sample_rate_hz)


def join_info(join: bridge_pb2.Join) -> tuple[Side, BotInfo, int, int]:
    side = ROLE_TO_SIDE.get(join.role)
    if side is None:
        raise BotProtocolError(
            "join.role", f"unknown role {join.role}; use ROLE_USER or ROLE_AGENT"
        )
    bot = BotInfo(join.bot.name, join.bot.version, dict(join.bot.labels))
    send = audio_rate(join.send_format, "join.send_format")
    receive = audio_rate(join.receive_format, "join.receive_format")
    if join.run_filter and (why := identifiers.problem(join.run_filter)):
        raise BotProtocolError("join.run_filter", f"{join.run_filter[:40]!r} {why}")
    return side, bot, send, receive


def _json(
    text: str, field: str, problems: list[str], empty: Any = None, *, obj: bool = False
) -> Any:
    if not text:
        return empty
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(f"{field} is not valid JSON ({exc.msg} at {exc.pos})")
        return {"unparsed": text}
    if obj and not isinstance(value, dict):
        problems.append(f"{field} must be a JSON object, got {type(value).__name__}")
        return {"unparsed": text}
    return value


def _dtmf_event(ev: common_pb2.BotEvent, side: Side) -> BotEvent:
    """Keys pressed (the user) or detected (the agent); refused when not keypad keys."""
    d = ev.dtmf
    payload: dict[str, Any] = {"digits": d.digits}
    problem = dtmf.problem(d.digits)
    if side is Side.USER:
        tone = d.tone_ms or dtmf.DEFAULT_TONE_MS
        gap = d.gap_ms or dtmf.DEFAULT_GAP_MS
        payload.update(tone_ms=tone, gap_ms=gap)
        for name, value in (("tone_ms", tone), ("gap_ms", gap)):
            if not problem and not dtmf.MIN_MS <= value <= dtmf.MAX_MS:
                problem = f"dtmf.{name}: {value} ms is outside {dtmf.MIN_MS}..{dtmf.MAX_MS}"
    if problem and not problem.startswith("dtmf."):
        problem = f"dtmf.digits {problem}"
    return BotEvent(EventKind.DTMF, ev.bot_unix_nanos, payload, problem)


def event_from_pb(ev: common_pb2.BotEvent, side: Side) -> BotEvent:
    which = ev.WhichOneof("event")
    problems: list[str] = []
    payload: dict[str, Any]
    if which == "transcript":
        t = ev.transcript
        kind = {1: "spoken", 2: "heard"}.get(t.kind, "unspecified")
        payload = {
            "kind": kind,
            "text": t.text,
            "is_final": t.is_final,
            "start_unix_nanos": t.start_unix_nanos,
            "end_unix_nanos": t.end_unix_nanos,
            "start_sample_offset": t.start_sample_offset,
            "end_sample_offset": t.end_sample_offset,
        }
        return BotEvent(EventKind.TRANSCRIPT, ev.bot_unix_nanos, payload)
    if which == "tool_call":
        c = ev.tool_call
        args = _json(c.arguments_json, "tool_call.arguments_json", problems, {}, obj=True)
        result = _json(c.result_json, "tool_call.result_json", problems)
        tool_side = ROLE_TO_SIDE.get(c.side, side)
        payload = {
            "call_id": c.call_id,
            "name": c.name,
            "arguments": args,
            "result": result,
            "error": c.error,
            "side": str(tool_side),
            "is_write": c.is_write,
            "started_unix_nanos": c.started_unix_nanos,
            "finished_unix_nanos": c.finished_unix_nanos,
        }
        return BotEvent(EventKind.TOOL_CALL, ev.bot_unix_nanos, payload, "; ".join(problems))
    if which == "token_usage":
        u = ev.token_usage
        payload = {
            "model": u.model,
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
        }
        return BotEvent(EventKind.TOKEN_USAGE, ev.bot_unix_nanos, payload)
    if which in ("speech_started", "speech_stopped"):
        b = getattr(ev, which)
        source = {1: "vad", 2: "tts"}.get(b.source, "unspecified")
        payload = {"source": source, "sample_offset": b.sample_offset}
        return BotEvent(EventKind(which), ev.bot_unix_nanos, payload)
    if which == "metric":
        m = ev.metric
        payload = {"name": m.name, "value": m.value, "unit": m.unit, "component": m.component}
        return BotEvent(EventKind.METRIC, ev.bot_unix_nanos, payload)
    if which == "end_conversation":
        e = ev.end_conversation
        kind = _END_KINDS.get(e.kind, "agent_end_tool" if side is Side.AGENT else "user_hang_up")
        return BotEvent(
            EventKind.END_CONVERSATION, ev.bot_unix_nanos, {"kind": kind, "reason": e.reason}
        )
    if which == "dtmf":
        return _dtmf_event(ev, side)
    if which == "log":
        level = common_pb2.LogLevel.Name(ev.log.level).removeprefix("LOG_LEVEL_").lower()
        payload = {"level": level, "message": ev.log.message}
        return BotEvent(EventKind.LOG, ev.bot_unix_nanos, payload)
    return BotEvent(EventKind.LOG, ev.bot_unix_nanos, {}, "event carries no content")


def bot_input(msg: bridge_pb2.BotMessage, side: Side) -> BotInput:
    which = msg.WhichOneof("message")
    if which == "audio":
        a = msg.audio
        return BotAudio(a.sequence, a.sample_offset, a.pcm, a.sent_unix_nanos)
    if which == "event":
        return event_from_pb(msg.event, side)
    if which in ("clock_ack", "text"):
        return tier_input(msg)
    if which == "final_state":
        f = msg.final_state
        state = (
            JsonPiece(f.state.offset, f.state.data, f.state.last) if f.HasField("state") else None
        )
        context = (
            JsonPiece(f.context.offset, f.context.data, f.context.last)
            if f.HasField("context")
            else None
        )
        return FinalStatePart(state, context, f.done)
    if which == "join":
        raise BotProtocolError("join", "Join must be the first message, and only the first")
    raise BotProtocolError("message", "empty BotMessage")
