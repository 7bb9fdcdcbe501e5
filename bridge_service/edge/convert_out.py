"""Domain -> protobuf for the Converse stream: what the bridge sends a bot (BridgeMessage).

Apart from :mod:`vae.bridge_service.edge.convert` (what bots send) because
this side follows the messages the bridge emits: a new message or field of
``BridgeMessage`` changes only this module. Every audio frame to every bot
passes through :func:`bridge_message`, so it is also where that path is kept
cheap. One of the modules touching ``*_pb2``.
"""

from __future__ import annotations

import json
from typing import Any

from vae.bridge.v1 import bridge_pb2
from vae.bridge_service.connectors.base import (
    BridgeOutput,
    ClockTickOut,
    DtmfOut,
    NoticeOut,
    PeerAudio,
    PeerEvent,
    PeerText,
    RedirectOut,
    SessionEndingOut,
    SessionStartInfo,
    StateSyncOut,
)
from vae.bridge_service.edge.convert_tiers import CLOCK_PB, MODALITY_PB, tier_message
from vae.common.v1 import common_pb2
from vae.recordings.models import Side

SIDE_TO_ROLE = {Side.USER: common_pb2.ROLE_USER, Side.AGENT: common_pb2.ROLE_AGENT}
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
                trace_context=bridge_pb2.TraceContext(
                    traceparent=out.traceparent, tracestate=out.tracestate
                ),
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
