"""Bridge defaults and the resolved options of a run.

Two layers: :class:`BridgeSettings` belong to the bridge process (limits that
protect it, whatever a run asks for); :class:`RunSettings` are one run's
options with every unset field filled from the defaults, exactly as recorded
in ``runs.options_json`` so a resume runs with the same settings.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from vae.bridge_service.connectors.base import ConnectorConfig
from vae.bridge_service.timebase import AUTO, REAL, RUN_CLOCKS
from vae.recordings.scenarios.line import LineConditions, merge

#: How the bots of a run talk (``RunOptions.modality``).
AUDIO = "audio"
TEXT = "text"
MODALITIES = (AUDIO, TEXT)

#: Sample rates a bot may send or receive.
MIN_RATE = 8000
MAX_RATE = 48000


def default_clock(modality: str) -> str:
    """The clock of a run that asks for none: auto in text, real in audio.

    Why these: a text run on the virtual clock runs as fast as its bots answer
    and auto takes it only where both bots of a session declared they can follow
    it (so no bot is ever put on a clock it cannot follow); audio stays on wall
    time unless asked, because an agent's real-time behaviour is what an audio
    run is usually meant to test.
    """
    return AUTO if modality == TEXT else REAL


class EndPolicy(enum.StrEnum):
    TOOL_ONLY = "tool-only"
    VALID_TERMINAL_STATE = "valid-terminal-state"


class StopReason(enum.StrEnum):
    """Recorded in ``sessions.stop_reason``; mirrors the proto enum."""

    END_TOOL = "end_tool"
    USER_HANG_UP = "user_hang_up"
    INACTIVITY_TIMEOUT = "inactivity_timeout"
    MAX_DURATION = "max_duration"
    BOT_DISCONNECTED = "bot_disconnected"
    BOT_ERROR = "bot_error"
    CANCELLED = "cancelled"
    SHUTDOWN = "shutdown"
    PEER_NEVER_JOINED = "peer_never_joined"
    CONNECTOR_FAILED = "connector_failed"
    BRIDGE_ERROR = "bridge_error"
    ATTEMPT_CRASHED = "attempt_crashed"
    STORAGE_ERROR = "storage_error"
    FIRST_SPEAKER_SILENT = "first_speaker_silent"
    #: A replay played its last recorded user turn and heard the agent's reply.
    REPLAY_FINISHED = "replay_finished"
    #: On the virtual clock, a bot answered no step for the inactivity timeout (wall).
    CLOCK_STALLED = "clock_stalled"
    #: Only bots that did not declare the run's text / virtual clock support were waiting.
    BOT_UNSUPPORTED = "bot_unsupported"
    #: The worker process serving the session died or stopped on its own (``--workers``).
    WORKER_LOST = "worker_lost"
    #: The bridge serving it for another bridge's run died or stopped (``--share-runs``).
    BRIDGE_LOST = "bridge_lost"
    #: SIP (``connectors.sip``): the call was refused or never answered, or its RTP stopped.
    SIP_BUSY = "sip_busy"
    SIP_NOT_FOUND = "sip_not_found"
    SIP_NO_ANSWER = "sip_no_answer"
    SIP_DECLINED = "sip_declined"
    SIP_SERVER_ERROR = "sip_server_error"
    SIP_AUTH_FAILED = "sip_auth_failed"
    SIP_RTP_TIMEOUT = "sip_rtp_timeout"
    #: A connector's agent process (one per session) exited or timed out before connecting.
    AGENT_START_FAILED = "agent_start_failed"
    #: A connector's agent process exited mid-call.
    AGENT_CRASHED = "agent_crashed"
    #: A connector's agent process never spoke within the connector's speak timeout.
    AGENT_SILENT = "agent_silent"


@dataclass(frozen=True)
class BridgeSettings:
    """Process-wide limits and timings of the bridge."""

    address: str = "127.0.0.1:50051"
    #: How long a Converse stream may wait for a session before WaitTimeout.
    wait_timeout_s: float = 300.0
    #: Largest PCM payload of one chunk (docs/contract.md, "Audio").
    max_chunk_bytes: int = 25_000
    #: Audio buffered per direction beyond which a fast sender's audio is dropped.
    max_buffer_ms: int = 2000
    #: Frames queued towards a bot before audio to it is dropped (slow reader).
    max_outgoing_frames: int = 125
    #: Time after an EndConversation for the last words to be delivered.
    end_grace_s: float = 1.0
    #: How long the bridge waits for FinalState after SessionEnding.
    final_state_timeout_s: float = 10.0
    #: Largest final-state document per side (state or context), bytes.
    max_final_state_bytes: int = 64 * 1024 * 1024
    #: Largest single FinalState chunk (state or context data), bytes.
    max_final_state_chunk_bytes: int = 1024 * 1024
    #: Largest gRPC message the bridge accepts (any RPC), bytes.
    max_receive_message_bytes: int = 4 * 1024 * 1024
    #: Converse streams that may wait for a session at once (more: RESOURCE_EXHAUSTED).
    max_waiting_streams: int = 1000
    #: BotEvents one bot may send per second (more: RESOURCE_EXHAUSTED).
    max_events_per_s: int = 500
    #: Energy detector used for turn counting and inactivity.
    speech_threshold_dbfs: float = -45.0
    speech_hangover_s: float = 0.5
    speech_min_s: float = 0.06
    #: ``vae bridge serve --otlp-receiver HOST:PORT``: receive agents' traces ("": none).
    otlp_receiver: str = ""
    #: ``vae bridge serve --otel-endpoint URL`` (or the ``OTEL_EXPORTER_OTLP_*`` variables),
    #: as the CLI resolved it, a full traces URL: every run's trace goes there ("": off).
    otel_endpoint: str = ""


@dataclass(frozen=True)
class RunSettings:
    """A run's options, resolved. Field names match ``RunOptions`` in the proto."""

    concurrency: int = 4
    max_duration_s: float | None = None
    inactivity_timeout_s: float = 120.0
    end_policy: EndPolicy = EndPolicy.TOOL_ONLY
    min_agent_turns: int = 0
    auto_resume_on_stale: bool = True
    auto_resume_on_insufficient_turns: bool = False
    max_auto_retries: int = 1
    auto_retry_backoff_s: float = 5.0
    frame_ms: int = 16
    jitter_buffer_ms: int = 80
    seed: int = 0
    tags: list[str] = field(default_factory=list)
    share_transcripts: bool = False
    strict_match: bool = False
    user_connector: ConnectorConfig | None = None
    agent_connector: ConnectorConfig | None = None
    resample_quality: str = "HQ"
    pairing_timeout_s: float = 60.0
    #: "agent" or "user": overrides every scenario's first_speaker (None: the scenario's).
    first_speaker: str | None = None
    first_speaker_timeout_s: float = 10.0
    #: Trials per scenario (``vae run --repeat K``); see recordings/trials.py.
    repeat: int = 1
    #: Replay (``vae.bridge_service.replay``): quiet that ends the agent's turn, seconds.
    replay_gate_silence_s: float = 0.5
    #: Replay: the source run, and scenario name -> source session id.
    replay_from: str = ""
    replay_sources: dict[str, str] = field(default_factory=dict)
    #: "audio" or "text" (``vae run --modality``): see docs/contract.md.
    modality: str = AUDIO
    #: "real", "virtual" or "auto" (``vae run --clock``): the sessions' clock (session_time);
    #: auto picks per session (``vae.bridge_service.runs.tiers.session_clock``). Unset
    #: (""): the modality's default, :func:`default_clock`.
    clock: str = ""
    #: Phone-line fields set for the whole run (``vae run --line``), over each
    #: scenario's ``user.line`` (recordings/scenarios/line.py).
    line: dict[str, Any] = field(default_factory=dict)
    #: ``vae run --redact``: the redaction configuration (vae.redaction) the run is
    #: recorded with; None: recorded as it is (bridge_service/runs/redacted.py).
    redaction: dict[str, Any] | None = None
    #: Serve every session's agent tools from a tool backend (``vae run --tool-backend``).
    tool_backend: bool = False
    #: ``vae run --otlp-receiver HOST:PORT``: receive the agent's traces during the run.
    otlp_receiver: str = ""
    #: ``vae run --otel-endpoint URL``: export the run's trace there when it ends.
    otel_endpoint: str = ""
    #: Seconds over which the first ``concurrency`` sessions start (``vae load --ramp-up``).
    ramp_up_s: float = 0.0

    def __post_init__(self) -> None:
        if not self.clock:  # resolved once, so the recorded options name the clock asked for
            object.__setattr__(self, "clock", default_clock(self.modality))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["end_policy"] = str(self.end_policy)
        for key in ("user_connector", "agent_connector"):
            if isinstance(data.get(key), dict):  # never recorded: secrets, the dial's session
                data[key].pop("secrets", None)
                data[key].pop("session", None)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSettings:
        """Rebuild recorded options (unknown keys are ignored: newer files)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        if "end_policy" in values:
            values["end_policy"] = EndPolicy(values["end_policy"])
        for key in ("user_connector", "agent_connector"):
            if isinstance(values.get(key), dict):
                values[key] = ConnectorConfig(**values[key])
        if "tags" in values:
            values["tags"] = list(values["tags"])
        return cls(**values)

    def validate(self) -> None:
        """Raise ValueError naming the first option out of range."""
        checks: list[tuple[bool, str, str]] = [
            (self.concurrency >= 1, "concurrency", "must be at least 1"),
            (1 <= self.repeat <= 1000, "repeat", "must be 1..1000"),
            (
                self.max_duration_s is None or self.max_duration_s > 0,
                "max_duration_s",
                "must be positive",
            ),
            (self.inactivity_timeout_s > 0, "inactivity_timeout_s", "must be positive"),
            (self.auto_retry_backoff_s >= 0, "auto_retry_backoff_s", "must not be negative"),
            (4 <= self.frame_ms <= 100, "frame_ms", "must be 4..100 ms"),
            (0 <= self.jitter_buffer_ms <= 1000, "jitter_buffer_ms", "must be 0..1000 ms"),
            (
                self.resample_quality in ("HQ", "MQ", "VHQ", "LQ"),
                "resample_quality",
                "must be HQ, MQ, VHQ or LQ",
            ),
            (self.pairing_timeout_s > 0, "pairing_timeout_s", "must be positive"),
            (
                self.first_speaker in (None, "agent", "user"),
                "first_speaker",
                "must be agent or user",
            ),
            (self.first_speaker_timeout_s > 0, "first_speaker_timeout_s", "must be positive"),
            (
                0.05 <= self.replay_gate_silence_s <= 10,
                "replay_gate_silence_s",
                "must be 0.05..10 s",
            ),
            (self.modality in MODALITIES, "modality", "must be audio or text"),
            (self.clock in RUN_CLOCKS, "clock", "must be real, virtual or auto"),
            (0 <= self.ramp_up_s <= 3600, "ramp_up_s", "must be 0..3600 s"),
        ]
        for ok, name, problem in checks:
            if not ok:
                raise ValueError(f"options.{name}: {problem}")
        self._validate_line()
        if self.otlp_receiver or self.otel_endpoint:
            from vae.otel.address import check_run_options

            check_run_options(self.otlp_receiver, self.otel_endpoint)
        if self.redaction is not None:
            from vae.redaction.config import RedactionConfigError, config_from_dict

            try:
                config_from_dict(self.redaction)
            except RedactionConfigError as exc:
                raise ValueError(f"options.redaction_json: {exc}") from None

    def _validate_line(self) -> None:
        if not self.line:
            return
        if self.modality == TEXT:
            raise ValueError(
                "options.line: a text session has no audio for a phone line to degrade "
                "(run with --modality audio, or without --line)"
            )
        try:
            merge(LineConditions(), self.line)
        except ValueError as exc:
            raise ValueError(f"options.line.{exc}") from None
