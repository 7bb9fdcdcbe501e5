"""Protobuf <-> domain records, at the service edge only."""

from __future__ import annotations

import json
from typing import Any

from vae.recordings.models import ScoreRecord, ScoringRecord, Verdict
from vae.scorer.v1 import scorer_pb2
from vae.scorer_service import signals
from vae.scorer_service.config import (
    ConfigError,
    JudgeSettings,
    ScoringConfig,
    TimingSettings,
    validate_overrides,
)
from vae.scorer_service.ledger.aggregate import SessionOutcome
from vae.scorer_service.ledger.scorings import Flip
from vae.speech.stt_settings import TranscriptionSettings

_VERDICTS = {
    Verdict.PASSED: scorer_pb2.VERDICT_PASSED,
    Verdict.FAILED: scorer_pb2.VERDICT_FAILED,
    Verdict.NOT_APPLICABLE: scorer_pb2.VERDICT_NOT_APPLICABLE,
    Verdict.UNSCORED: scorer_pb2.VERDICT_UNSCORED,
}


def verdict_to_proto(v: Verdict | None) -> scorer_pb2.Verdict.ValueType:
    return scorer_pb2.VERDICT_UNSPECIFIED if v is None else _VERDICTS[v]


def verdict_from_proto(v: int) -> Verdict | None:
    for verdict, code in _VERDICTS.items():
        if code == v:
            return verdict
    return None


def _json_object(text: str, what: str) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{what} is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{what} must be a JSON object")
    return value


def config_from_proto(pb: scorer_pb2.ScoringConfig) -> ScoringConfig:
    j, t = pb.judge, pb.timing
    judge = JudgeSettings(
        base_url=j.base_url,
        model=j.model,
        api_key=j.api_key,
        temperature=j.temperature if j.HasField("temperature") else None,
        seed=j.seed if j.HasField("seed") else None,
        max_tokens=j.max_tokens if j.HasField("max_tokens") else None,
        top_p=j.top_p if j.HasField("top_p") else None,
        prompt_template=j.prompt_template,
        include_conversation=j.include_conversation,
        no_cache=j.no_cache,
    )
    if j.HasField("timeout_s"):
        judge.timeout_s = j.timeout_s
    if j.HasField("max_retries"):
        judge.max_retries = j.max_retries
    if j.HasField("concurrency"):
        judge.concurrency = j.concurrency
    if j.HasField("threshold"):
        judge.threshold = j.threshold
    timing = TimingSettings(
        detector=t.detector or "energy",
        detector_options=_json_object(t.detector_options_json, "timing.detector_options_json"),
    )
    if t.HasField("merge_gap_user_s"):
        timing.merge_gap_user_s = t.merge_gap_user_s
    if t.HasField("merge_gap_agent_s"):
        timing.merge_gap_agent_s = t.merge_gap_agent_s
    if t.HasField("yield_window_s"):
        timing.yield_window_s = t.yield_window_s
    overrides = validate_overrides(_json_object(pb.overrides_json, "overrides_json"), "overrides")
    return ScoringConfig(
        transcription=_transcription_from_proto(pb.transcription),
        scorers=list(pb.scorers),
        judge=judge,
        timing=timing,
        overrides=overrides,
        strict_match=True if pb.strict_match else None,
        min_agent_turns=pb.min_agent_turns if pb.HasField("min_agent_turns") else None,
        end_policy=pb.end_policy or None,
        label=pb.label,
        no_judge=pb.no_judge,
    )


def config_to_proto(data: dict[str, Any]) -> scorer_pb2.ScoringConfig:
    """A stored config (dict) back on the wire; the API key was never stored."""
    judge = data.get("judge") or {}
    timing = data.get("timing") or {}
    pb = scorer_pb2.ScoringConfig(
        scorers=list(data.get("scorers") or []),
        overrides_json=json.dumps(data.get("overrides") or {}),
        strict_match=bool(data.get("strict_match")),
        end_policy=str(data.get("end_policy") or ""),
        label=str(data.get("label") or ""),
        no_judge=bool(data.get("no_judge")),
    )
    if data.get("min_agent_turns") is not None:
        pb.min_agent_turns = int(data["min_agent_turns"])
    pb.judge.base_url = str(judge.get("base_url", ""))
    pb.judge.model = str(judge.get("model", ""))
    pb.judge.prompt_template = str(judge.get("prompt_template", ""))
    pb.judge.include_conversation = bool(judge.get("include_conversation", False))
    pb.judge.no_cache = bool(judge.get("no_cache", False))
    for name in ("temperature", "top_p", "timeout_s", "threshold"):
        if judge.get(name) is not None:
            setattr(pb.judge, name, float(judge[name]))
    for name in ("seed", "max_tokens", "max_retries", "concurrency"):
        if judge.get(name) is not None:
            setattr(pb.judge, name, int(judge[name]))
    pb.timing.detector = str(timing.get("detector", ""))
    pb.timing.detector_options_json = json.dumps(timing.get("detector_options") or {})
    for name in ("merge_gap_user_s", "merge_gap_agent_s", "yield_window_s"):
        if timing.get(name) is not None:
            setattr(pb.timing, name, float(timing[name]))
    asr = data.get("transcription") or {}
    if asr.get("engine"):
        t = pb.transcription
        for name in ("engine", "base_url", "model", "language", "transcripts"):
            setattr(t, name, str(asr.get(name) or ""))
        t.no_cache = bool(asr.get("no_cache", False))
        if asr.get("timeout_s") is not None:
            t.timeout_s = float(asr["timeout_s"])
        for name in ("max_retries", "concurrency"):
            if asr.get(name) is not None:
                setattr(t, name, int(asr[name]))
    return pb


def _transcription_from_proto(t: scorer_pb2.TranscriptionConfig) -> TranscriptionSettings:
    given: dict[str, Any] = {
        name: getattr(t, name)
        for name in ("timeout_s", "max_retries", "concurrency")
        if t.HasField(name)
    }
    return TranscriptionSettings(
        engine=t.engine,
        base_url=t.base_url,
        model=t.model,
        api_key=t.api_key,
        language=t.language,
        transcripts=t.transcripts or "bots",
        no_cache=t.no_cache,
        **given,
    )


def score_to_proto(s: ScoreRecord) -> scorer_pb2.Score:
    pb = scorer_pb2.Score(
        signal=s.signal,
        verdict=verdict_to_proto(s.verdict),
        detail_json=json.dumps(s.detail, default=str),
        error=s.error,
    )
    if s.value is not None:
        pb.value = s.value
    return pb


def session_to_proto(o: SessionOutcome) -> scorer_pb2.SessionScores:
    succ = o.get(signals.IS_SUCCESSFUL)
    task = o.get(signals.IS_TASK_SUCCESSFUL)
    return scorer_pb2.SessionScores(
        session_id=o.session_id,
        scenario_name=o.scenario_name,
        domain=o.domain,
        is_successful=verdict_to_proto(succ.verdict if succ else None),
        is_task_successful=verdict_to_proto(task.verdict if task else None),
        scores=[score_to_proto(s) for s in o.scores],
    )


def scoring_to_proto(s: ScoringRecord) -> scorer_pb2.Scoring:
    return scorer_pb2.Scoring(
        scoring_id=s.scoring_id,
        run_id=s.run_id,
        created_unix_nanos=s.created_ns,
        status=s.status,
        superseded_by=s.superseded_by or "",
        config=config_to_proto(s.config),
        judge_model=s.judge_model,
        prompt_hash=s.prompt_hash,
        versions_json=json.dumps(s.versions),
        summary_json=json.dumps(s.summary, default=str),
    )


def flip_to_proto(f: Flip) -> scorer_pb2.ScoreFlip:
    pb = scorer_pb2.ScoreFlip(
        session_id=f.session_id,
        scenario_name=f.scenario_name,
        signal=f.signal,
        verdict_a=verdict_to_proto(f.verdict_a),
        verdict_b=verdict_to_proto(f.verdict_b),
    )
    if f.value_a is not None:
        pb.value_a = f.value_a
    if f.value_b is not None:
        pb.value_b = f.value_b
    return pb


def score_from_proto(scoring_id: str, session_id: str, pb: scorer_pb2.Score) -> ScoreRecord:
    detail = json.loads(pb.detail_json) if pb.detail_json else {}
    return ScoreRecord(
        scoring_id=scoring_id,
        session_id=session_id,
        signal=pb.signal,
        verdict=verdict_from_proto(pb.verdict) or Verdict.NOT_APPLICABLE,
        value=pb.value if pb.HasField("value") else None,
        detail=detail if isinstance(detail, dict) else {"value": detail},
        error=pb.error,
    )


def session_from_proto(scoring_id: str, pb: scorer_pb2.SessionScores) -> SessionOutcome:
    """A streamed session back as an outcome (its duration is not on the wire)."""
    return SessionOutcome(
        session_id=pb.session_id,
        scenario_name=pb.scenario_name,
        domain=pb.domain,
        duration_s=0.0,
        scores=[score_from_proto(scoring_id, pb.session_id, s) for s in pb.scores],
    )


def scoring_from_proto(pb: scorer_pb2.Scoring) -> ScoringRecord:
    from google.protobuf import json_format

    config = json_format.MessageToDict(pb.config, preserving_proto_field_name=True)
    return ScoringRecord(
        scoring_id=pb.scoring_id,
        run_id=pb.run_id,
        created_ns=pb.created_unix_nanos,
        status=pb.status,
        config=config,
        versions=json.loads(pb.versions_json or "{}"),
        judge_model=pb.judge_model,
        prompt_hash=pb.prompt_hash,
        superseded_by=pb.superseded_by or None,
        summary=json.loads(pb.summary_json or "{}"),
    )
