"""Protobuf <-> domain for run control (StartRun, WatchRun, GetRun, ListRuns, CancelRun)."""

from __future__ import annotations

import json
from typing import Any

from vae.bridge.v1 import bridge_pb2
from vae.bridge_service.config import EndPolicy
from vae.bridge_service.connectors.base import (
    ConnectorConfig,
    ConnectorError,
    check_connector,
    default_capacity,
)
from vae.bridge_service.edge.convert_out import stop_reason_pb
from vae.bridge_service.edge.convert_tiers import CLOCK_OF, CLOCK_PB, MODALITY_OF, MODALITY_PB
from vae.bridge_service.identity import BridgeIdentity
from vae.bridge_service.runs.model import (
    Classification,
    RunEvent,
    RunEventKind,
    RunView,
    SessionSummary,
)
from vae.common.v1 import common_pb2
from vae.recordings.models import RunStatus
from vae.recordings.scenarios.sources import Source

_STATUS = {
    RunStatus.PENDING: bridge_pb2.RUN_STATUS_PENDING,
    RunStatus.RUNNING: bridge_pb2.RUN_STATUS_RUNNING,
    RunStatus.COMPLETED: bridge_pb2.RUN_STATUS_COMPLETED,
    RunStatus.CANCELLED: bridge_pb2.RUN_STATUS_CANCELLED,
    RunStatus.FAILED: bridge_pb2.RUN_STATUS_FAILED,
}
_EVENT = {
    RunEventKind.SESSION_STARTED: bridge_pb2.RUN_EVENT_KIND_SESSION_STARTED,
    RunEventKind.SESSION_ENDED: bridge_pb2.RUN_EVENT_KIND_SESSION_ENDED,
    RunEventKind.SESSION_RETRYING: bridge_pb2.RUN_EVENT_KIND_SESSION_RETRYING,
    RunEventKind.RUN_FINISHED: bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED,
}
_RESUME = {
    "completed": bridge_pb2.RESUME_STATE_COMPLETED,
    "in_flight": bridge_pb2.RESUME_STATE_IN_FLIGHT,
    "fresh": bridge_pb2.RESUME_STATE_FRESH,
}
_OPTIONAL = (
    "concurrency",
    "max_duration_s",
    "inactivity_timeout_s",
    "min_agent_turns",
    "auto_resume_on_stale",
    "auto_resume_on_insufficient_turns",
    "max_auto_retries",
    "auto_retry_backoff_s",
    "frame_ms",
    "jitter_buffer_ms",
    "seed",
    "share_transcripts",
    "strict_match",
    "resample_quality",
    "pairing_timeout_s",
    "first_speaker_timeout_s",
    "repeat",
    "replay_gate_silence_s",
    "tool_backend",
    "ramp_up_s",
)
_ROLE = {common_pb2.ROLE_USER: "user", common_pb2.ROLE_AGENT: "agent"}
_ROLE_PB = {v: k for k, v in _ROLE.items()}


def sources_from_pb(sources: Any) -> list[Source]:
    out = []
    for i, src in enumerate(sources):
        which = src.WhichOneof("source")
        if which is None:
            raise ValueError(f"sources[{i}]: set one of path, python_module, inline")
        out.append(Source(which, getattr(src, which)))
    return out


def _connector(cfg: bridge_pb2.ConnectorConfig, field: str) -> ConnectorConfig | None:
    if not cfg.kind:
        return None
    try:
        options = json.loads(cfg.options_json) if cfg.options_json else {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"options.{field}.options_json: not valid JSON ({exc.msg})") from exc
    if not isinstance(options, dict):
        raise ValueError(f"options.{field}.options_json: must be a JSON object")
    if cfg.HasField("capacity") and cfg.capacity < 1:
        raise ValueError(f"options.{field}.capacity: must be at least 1")
    if cfg.HasField("connect_timeout_s") and cfg.connect_timeout_s <= 0:
        raise ValueError(f"options.{field}.connect_timeout_s: must be positive")
    config = ConnectorConfig(
        cfg.kind,
        cfg.url,
        options,
        list(cfg.pool_urls),
        cfg.capacity if cfg.HasField("capacity") else default_capacity(cfg.kind),
        cfg.connect_timeout_s if cfg.HasField("connect_timeout_s") else 30.0,
        dict(cfg.secrets),
    )
    try:
        check_connector(config)  # wrong options or URLs: refused now, not at every dial
    except ConnectorError as exc:
        raise ValueError(f"options.{field}: {exc}") from exc
    return config


def overrides_from_pb(options: bridge_pb2.RunOptions) -> dict[str, Any]:
    """Only the options the caller set: the rest keep defaults (or a resumed run's values)."""
    out: dict[str, Any] = {}
    for name in _OPTIONAL:
        if options.HasField(name):  # type: ignore[arg-type]
            out[name] = getattr(options, name)
    if options.end_policy == bridge_pb2.END_POLICY_TOOL_ONLY:
        out["end_policy"] = EndPolicy.TOOL_ONLY
    elif options.end_policy == bridge_pb2.END_POLICY_VALID_TERMINAL_STATE:
        out["end_policy"] = EndPolicy.VALID_TERMINAL_STATE
    if options.tags:
        out["tags"] = list(options.tags)
    if options.first_speaker in _ROLE:
        out["first_speaker"] = _ROLE[options.first_speaker]
    if options.modality in MODALITY_OF:
        out["modality"] = MODALITY_OF[options.modality]
    if options.clock in CLOCK_OF:
        out["clock"] = CLOCK_OF[options.clock]
    for name in ("user_connector", "agent_connector"):
        cfg = _connector(getattr(options, name), name)
        if cfg is not None:
            out[name] = cfg
    if options.HasField("line"):
        line = line_from_pb(options.line)
        if line:
            out["line"] = line
    if options.redaction_json:
        out["redaction"] = _redaction(options.redaction_json)
    for name in ("otlp_receiver", "otel_endpoint"):
        if getattr(options, name):
            out[name] = getattr(options, name)
    return out


def _redaction(text: str) -> dict[str, Any]:
    """RunOptions.redaction_json as a mapping (ValueError naming the field)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"options.redaction_json: not valid JSON ({exc.msg})") from None
    if not isinstance(doc, dict):
        raise ValueError("options.redaction_json: must be a JSON object")
    return doc


_LINE_NUMBERS = (
    "packet_loss",
    "packet_loss_burst",
    "jitter_ms",
    "gain_db",
    "clipping",
    "white_noise_db",
)


def line_from_pb(pb: bridge_pb2.LineConditions) -> dict[str, Any]:
    """The line fields a run set (RunOptions.line); range checks are RunSettings.validate's."""
    out: dict[str, Any] = {}
    if pb.codec:
        out["codec"] = pb.codec
    for name in _LINE_NUMBERS:
        if pb.HasField(name):  # type: ignore[arg-type]
            out[name] = getattr(pb, name)
    return out


def line_pb(line: dict[str, Any]) -> bridge_pb2.LineConditions:
    pb = bridge_pb2.LineConditions(codec=str(line.get("codec") or ""))
    for name in _LINE_NUMBERS:
        if line.get(name) is not None:
            setattr(pb, name, float(line[name]))
    return pb


def options_pb(options: dict[str, Any]) -> bridge_pb2.RunOptions:
    pb = bridge_pb2.RunOptions()
    for name in _OPTIONAL:
        value = options.get(name)
        if value is not None:
            setattr(pb, name, value)
    pb.end_policy = (
        bridge_pb2.END_POLICY_VALID_TERMINAL_STATE
        if options.get("end_policy") == str(EndPolicy.VALID_TERMINAL_STATE)
        else bridge_pb2.END_POLICY_TOOL_ONLY
    )
    pb.tags.extend(str(t) for t in options.get("tags", []) or [])
    for name in ("user_connector", "agent_connector"):
        cfg = options.get(name)
        if isinstance(cfg, dict):
            target = getattr(pb, name)
            target.kind = str(cfg.get("kind", ""))
            target.url = str(cfg.get("url", ""))
            target.options_json = json.dumps(cfg.get("options", {}))
            target.pool_urls.extend(str(u) for u in cfg.get("pool_urls", []) or [])
            target.capacity = int(cfg.get("capacity", 1))
            target.connect_timeout_s = float(cfg.get("connect_timeout_s", 30.0))
    if options.get("first_speaker") in _ROLE_PB:
        pb.first_speaker = _ROLE_PB[options["first_speaker"]]
    pb.modality = MODALITY_PB.get(str(options.get("modality", "audio")), common_pb2.MODALITY_AUDIO)
    pb.clock = CLOCK_PB.get(str(options.get("clock", "real")), common_pb2.CLOCK_KIND_REAL)
    line = options.get("line")
    if isinstance(line, dict) and line:
        pb.line.CopyFrom(line_pb(line))
    return pb


def summary_pb(s: SessionSummary) -> bridge_pb2.SessionSummary:
    return bridge_pb2.SessionSummary(
        session=common_pb2.SessionRef(
            run_id=s.run_id,
            session_id=s.session_id,
            scenario_name=s.scenario_name,
            attempt=s.attempt,
        ),
        stop_reason=stop_reason_pb(s.stop_reason),
        clean_exit=s.clean_exit,
        user_turns=s.user_turns,
        agent_turns=s.agent_turns,
        duration_s=s.duration_s,
        status=s.status,
        retry_reason=s.retry_reason,
        stop_detail=s.stop_detail,
        bot_errors=list(s.bot_errors),
        finished=s.finished,
        modality=MODALITY_PB.get(s.modality, common_pb2.MODALITY_AUDIO),
        clock=CLOCK_PB.get(s.clock, common_pb2.CLOCK_KIND_REAL),
        bridge=bridge_process_pb(s.bridge),
    )


def bridge_process_pb(bridge: dict[str, Any] | None) -> bridge_pb2.BridgeProcess | None:
    """The recorded bridge identity (``vae.bridge_service.identity``) as a BridgeProcess."""
    if not bridge:
        return None
    who = BridgeIdentity.from_dict(bridge)
    pb = bridge_pb2.BridgeProcess(
        host=who.host, pid=who.pid, address=who.address, front_door=who.front_door
    )
    if who.worker is not None:
        pb.worker = who.worker
    return pb


def run_pb(view: RunView) -> bridge_pb2.Run:
    return bridge_pb2.Run(
        run_id=view.run_id,
        status=_STATUS.get(view.status, bridge_pb2.RUN_STATUS_UNSPECIFIED),
        options=options_pb(view.options),
        created_unix_nanos=view.created_ns,
        finished_unix_nanos=view.finished_ns,
        scenarios_total=view.scenarios_total,
        scenarios_done=view.scenarios_done,
        vae_version=view.vae_version,
        sessions=[summary_pb(s) for s in view.sessions],
        error=view.error,
    )


def classification_pb(c: Classification) -> bridge_pb2.ResumeClassification:
    return bridge_pb2.ResumeClassification(
        scenario_name=c.scenario_name,
        state=_RESUME.get(c.state, bridge_pb2.RESUME_STATE_UNSPECIFIED),
        reason=c.reason,
        session_id=c.session_id,
    )


def event_pb(e: RunEvent) -> bridge_pb2.WatchRunResponse:
    pb = bridge_pb2.WatchRunResponse(
        kind=_EVENT[e.kind],
        run_id=e.run_id,
        scenarios_done=e.scenarios_done,
        scenarios_total=e.scenarios_total,
        message=e.message,
        unix_nanos=e.unix_ns,
    )
    if e.session is not None:
        pb.session.CopyFrom(summary_pb(e.session))
    if e.status is not None:
        pb.status = _STATUS[e.status]
    return pb
