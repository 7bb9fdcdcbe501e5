"""Protobuf <-> domain for the Converse stream (one of the two modules touching *_pb2).

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
    BridgeOutput,
    ClockTickOut,
    DtmfOut,
    FinalStatePart,
    JsonPiece,
    NoticeOut,
    PeerAudio,
    PeerEvent,
    PeerText,
    RedirectOut,
    SessionEndingOut,
    SessionStartInfo,
    StateSyncOut,
)
from vae.bridge_service.edge.convert_tiers import CLOCK_PB, MODALITY_PB, tier_input, tier_message
from vae.common.v1 import common_pb2
from vae.recordings import identifiers
from vae.recordings.models import EventKind, Side

ROLE_TO_SIDE = {common_pb2.ROLE_USER: Side.USER, common_pb2.ROLE_AGENT: Side.AGENT}
SIDE_TO_ROLE = {Side.USER: common_pb2.ROLE_USER, Side.AGENT: common_pb2.ROLE_AGENT}
_END_KINDS = {
    common_pb2.END_KIND_AGENT_END_TOOL: "agent_end_tool",
    common_pb2.END_KIND_USER_HANG_UP: "user_hang_up",
    common_pb2.END_KIND_BOT_ERROR: "bot_error",
}
#: Every StopReason by its stored name (``end_tool``): derived, so a new enum value needs no edit.
_STOP = {
    name.removeprefix("STOP_REASON_").lower(): value
    for name, value in bridge_pb2.StopReason.items()
    if value != bridge_pb2.STOP_REASON_UNSPECIFIED
}
_FIRST = {"user": common_pb2.ROLE_USER, "agent": common_pb2.ROLE_AGENT}
_NOTICE = {
    "sequence_gap": bridge_pb2.NOTICE_CODE_SEQUENCE_GAP,
    "audio_dropped": bridge_pb2.NOTICE_CODE_AUDIO_DROPPED,
    "malformed_event": bridge_pb2.NOTICE_CODE_MALFORMED_EVENT,
    "slow_reader": bridge_pb2.NOTICE_CODE_SLOW_READER,
}


def stop_reason_pb(reason: str) -> bridge_pb2.StopReason.ValueType:
    return _STOP.get(reason, bridge_pb2.STOP_REASON_UNSPECIFIED)


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


def _fmt(rate: int) -> common_pb2.AudioFormat:
    return common_pb2.AudioFormat(
        encoding=common_pb2.AUDIO_ENCODING_PCM16LE, sample_rate_hz=rate, channels=1
    )


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def bridge_message(out: BridgeOutput | RedirectOut) -> bridge_pb2.BridgeMessage:
    if isinstance(out, PeerAudio):
        # Every frame to every bot comes through here: setting the fields of the
        # nested message in place costs half of building it from keyword arguments.
        message = bridge_pb2.BridgeMessage()
        audio = message.audio
        audio.sequence = out.sequence
        audio.sample_offset = out.sample_offset
        audio.pcm = out.pcm
        audio.sent_unix_nanos = out.sent_ns
        return message
    if isinstance(out, ClockTickOut | PeerText):
        return tier_message(out)
    if isinstance(out, SessionStartInfo):
        return bridge_pb2.BridgeMessage(
            session_start=bridge_pb2.SessionStart(
                session=common_pb2.SessionRef(
                    run_id=out.run_id,
                    session_id=out.session_id,
                    scenario_name=out.scenario_name,
                    attempt=out.attempt,
                ),
                role=SIDE_TO_ROLE[out.role],
                domain=out.domain,
                system_prompt=out.system_prompt,
                tools_json=_dumps(out.tools),
                initial_state_json=_dumps(out.initial_state),
                initialization_actions_json=_dumps(out.initialization_actions),
                side_config_json=_dumps(out.side_config),
                max_duration_ms=out.max_duration_ms,
                share_transcripts=out.share_transcripts,
                receive_format=_fmt(out.receive_rate),
                frame_ms=out.frame_ms,
                frames_per_message=out.frames_per_message,
                first_speaker=_FIRST.get(out.first_speaker, common_pb2.ROLE_UNSPECIFIED),
                seed=out.seed,
                trial=out.trial,
                modality=MODALITY_PB.get(out.modality, common_pb2.MODALITY_AUDIO),
                clock=CLOCK_PB.get(out.clock, common_pb2.CLOCK_KIND_REAL),
                tool_backend=None
                if out.tool_backend is None
                else bridge_pb2.ToolBackend(**out.tool_backend.to_dict()),
            )
        )
    if isinstance(out, PeerEvent):
        return bridge_pb2.BridgeMessage(peer_event=_transcript_pb(out))
    if isinstance(out, StateSyncOut):
        return bridge_pb2.BridgeMessage(
            state_sync=bridge_pb2.StateSync(
                sequence=out.sequence,
                delta_json=_dumps(out.delta),
                cause_call_id=out.cause_call_id,
                cause_side=SIDE_TO_ROLE.get(out.cause_side, common_pb2.ROLE_UNSPECIFIED),
            )
        )
    if isinstance(out, DtmfOut):
        pb = common_pb2.Dtmf(digits=out.digits, tone_ms=out.tone_ms, gap_ms=out.gap_ms)
        return bridge_pb2.BridgeMessage(dtmf=pb)
    if isinstance(out, NoticeOut):
        code = _NOTICE.get(out.code, bridge_pb2.NOTICE_CODE_UNSPECIFIED)
        return bridge_pb2.BridgeMessage(notice=bridge_pb2.Notice(code=code, message=out.message))
    if isinstance(out, RedirectOut):
        return bridge_pb2.BridgeMessage(
            redirect=bridge_pb2.Redirect(
                port=out.port,
                ticket=out.ticket,
                worker=out.worker,
                arrive_within_ms=out.arrive_within_ms,
                session_id=out.session_id,
            )
        )
    if isinstance(out, SessionEndingOut):
        return bridge_pb2.BridgeMessage(
            session_ending=bridge_pb2.SessionEnding(
                reason=stop_reason_pb(out.reason),
                detail=out.detail,
                final_state_timeout_ms=out.final_state_timeout_ms,
            )
        )
    return bridge_pb2.BridgeMessage(
        session_ended=bridge_pb2.SessionEnded(
            reason=stop_reason_pb(out.reason), clean_exit=out.clean_exit
        )
    )


def _transcript_pb(ev: PeerEvent) -> common_pb2.BotEvent:
    p = ev.payload
    kind = {"spoken": 1, "heard": 2}.get(str(p.get("kind")), 0)
    return common_pb2.BotEvent(
        bot_unix_nanos=ev.bot_ns,
        transcript=common_pb2.Transcript(
            kind=kind,  # type: ignore[arg-type]
            text=str(p.get("text", "")),
            is_final=bool(p.get("is_final", False)),
            start_unix_nanos=int(p.get("start_unix_nanos", 0)),
            end_unix_nanos=int(p.get("end_unix_nanos", 0)),
            start_sample_offset=int(p.get("start_sample_offset", -1)),
            end_sample_offset=int(p.get("end_sample_offset", -1)),
        ),
    )
