"""A scoring's configuration: plain dataclasses, stored whole with the scoring.

Everything needed to reproduce a scoring lives here (except the judge's API
key, which is never stored). ``to_dict``/``config_from_dict`` round-trip
through the ``scorings.config_json`` column. Unset optional values keep their
``None`` so a stored config says "default" rather than freezing today's default.

The transcription stage's settings are
:class:`vae.speech.stt_settings.TranscriptionSettings`, the very type the
speech engines are built from (one type, so the stored fields and the
engines' never drift apart); it is stored under ``"transcription"`` like the
other sections.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from vae.speech.stt_settings import ENGINES, TRANSCRIPT_SOURCES, TranscriptionSettings

#: Keys an override entry may set, replacing the recorded scenario's value; the
#: ``add_*`` keys instead append to the scenario's own list (docs/scenarios.md).
OVERRIDE_KEYS = frozenset(
    {
        "add_nl_assertions",
        "add_db_state_assertions",
        "nl_assertions",
        "db_state_assertions",
        "reference_answer",
        "expected_scenario_db",
        "expected_user_db",
        "success_signals",
        "tool_call_expectations",
        "add_tool_call_expectations",
    }
)

END_POLICIES = ("tool-only", "valid-terminal-state")


class ConfigError(ValueError):
    """A scoring config or overrides file is invalid; the message says where."""


@dataclass
class JudgeSettings:
    base_url: str = ""
    model: str = ""
    #: Sent as a bearer token; excluded from :meth:`ScoringConfig.to_dict`.
    api_key: str = ""
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    prompt_template: str = ""
    timeout_s: float = 60.0
    max_retries: int = 3
    concurrency: int = 4
    include_conversation: bool = False
    threshold: float = 0.9
    #: First retry delay; doubles per attempt (kept small in tests).
    backoff_s: float = 0.5
    #: Ask the judge again even when a reply is cached (fresh replies still refresh the cache).
    no_cache: bool = False

    @property
    def enabled(self) -> bool:
        return bool(self.base_url)


@dataclass
class TimingSettings:
    detector: str = "energy"
    detector_options: dict[str, Any] = field(default_factory=dict)
    merge_gap_user_s: float = 0.6
    merge_gap_agent_s: float = 0.5
    yield_window_s: float = 2.0


@dataclass
class ScoringConfig:
    #: Scorer names to run; empty: all.
    scorers: list[str] = field(default_factory=list)
    judge: JudgeSettings = field(default_factory=JudgeSettings)
    timing: TimingSettings = field(default_factory=TimingSettings)
    #: scenario name (or "*") -> {override key: value}
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ``None``: the run's recorded option.
    strict_match: bool | None = None
    min_agent_turns: int | None = None
    end_policy: str | None = None
    label: str = ""
    #: Explicitly score without a judge: judge signals a scenario needs are unscored (no_judge).
    no_judge: bool = False
    transcription: TranscriptionSettings = field(default_factory=TranscriptionSettings)
    #: ``vae rescore --redact``: the redaction configuration (vae.redaction) applied to
    #: everything the scorers and the judge read; None: the recording as it is.
    redaction: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["judge"].pop("api_key", None)
        data["transcription"].pop("api_key", None)
        return data

    def validate(self) -> None:
        if self.end_policy is not None and self.end_policy not in END_POLICIES:
            raise ConfigError(f"end_policy must be one of {', '.join(END_POLICIES)}")
        if not 0.0 <= self.judge.threshold <= 1.0:
            raise ConfigError("judge threshold must be between 0 and 1")
        if self.judge.enabled and not self.judge.model:
            raise ConfigError("a judge base URL needs a judge model")
        if self.judge.enabled and self.no_judge:
            raise ConfigError("--no-judge contradicts --judge-base-url: give one of them")
        if self.judge.concurrency < 1:
            raise ConfigError("judge concurrency must be at least 1")
        _validate_transcription(self.transcription)
        if self.redaction is not None:
            from vae.redaction.config import RedactionConfigError, config_from_dict

            try:
                config_from_dict(self.redaction)
            except RedactionConfigError as exc:
                raise ConfigError(f"redaction: {exc}") from exc
        validate_overrides(self.overrides, "overrides")


def _validate_transcription(t: TranscriptionSettings) -> None:
    if t.engine and t.engine not in ENGINES:
        raise ConfigError(
            f"unknown transcription engine {t.engine!r} (choose from {', '.join(ENGINES)})"
        )
    if t.transcripts not in TRANSCRIPT_SOURCES:
        raise ConfigError(f"transcripts must be one of {', '.join(TRANSCRIPT_SOURCES)}")
    if t.transcripts != "bots" and not t.engine:
        raise ConfigError(f"--transcripts {t.transcripts} needs a transcription (--transcribe)")
    if t.engine == "openai" and not (t.base_url and t.model):
        raise ConfigError(
            "--transcribe openai needs --asr-base-url and --asr-model "
            "(env VAE_ASR_BASE_URL, VAE_ASR_MODEL)"
        )
    if t.concurrency < 1 or t.max_retries < 0 or t.timeout_s <= 0:
        raise ConfigError(
            "transcription concurrency must be at least 1, retries at least 0, timeout above 0"
        )


def config_from_dict(data: dict[str, Any]) -> ScoringConfig:
    """Rebuild a stored config (unknown keys are ignored: newer vae wrote them)."""
    judge = _known(JudgeSettings, data.get("judge") or {})
    timing = _known(TimingSettings, data.get("timing") or {})
    transcription = _known(TranscriptionSettings, data.get("transcription") or {})
    top = _known(ScoringConfig, data)
    top.update(
        judge=JudgeSettings(**judge),
        timing=TimingSettings(**timing),
        transcription=TranscriptionSettings(**transcription),
    )
    return ScoringConfig(**top)


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    nested = ("judge", "timing", "transcription")
    return {k: v for k, v in data.items() if k in names and k not in nested}


def validate_overrides(value: Any, source: str) -> dict[str, dict[str, Any]]:
    """Check the shape of an overrides document; raise :class:`ConfigError` naming the key."""
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: expected a mapping of scenario name (or '*') to overrides")
    for name, entry in value.items():
        if not isinstance(entry, dict):
            raise ConfigError(f"{source}: {name}: expected a mapping of override keys")
        unknown = sorted(set(entry) - OVERRIDE_KEYS)
        if unknown:
            allowed = ", ".join(sorted(OVERRIDE_KEYS))
            raise ConfigError(f"{source}: {name}.{unknown[0]}: unknown override ({allowed})")
    return value


def load_overrides(path: str | Path) -> dict[str, dict[str, Any]]:
    """Read an overrides file (YAML or JSON) keyed by scenario name or ``"*"``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{p}: not valid {p.suffix.lstrip('.') or 'YAML'}: {exc}") from exc
    return validate_overrides(data or {}, str(p))
