"""Domain records of the store: plain dataclasses, no protobuf.

Times are integers: ``*_ns`` fields are unix nanoseconds on the bridge's clock
unless named otherwise (``bot_ns`` is on the bot's clock).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Side(enum.StrEnum):
    USER = "user"
    AGENT = "agent"
    BRIDGE = "bridge"


class Channel(enum.StrEnum):
    """Recorded audio channels of a session.

    ``user``/``agent`` hold each bot's audio as it sent it (its own rate and
    sample clock, with the bridge's arrival time); ``to_agent``/``to_user`` hold
    what the bridge delivered on its open-mic clock (after resampling and noise).
    """

    USER = "user"
    AGENT = "agent"
    TO_AGENT = "to_agent"
    TO_USER = "to_user"


class RunStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    FAILED = "failed"


class SessionStatus(enum.StrEnum):
    RUNNING = "running"
    ENDED = "ended"
    #: Kept, but replaced by a later attempt (a resume re-ran it).
    SUPERSEDED = "superseded"


class EventKind(enum.StrEnum):
    """Kinds of recorded events. Bot events first, then the bridge's own."""

    TRANSCRIPT = "transcript"
    TOOL_CALL = "tool_call"
    TOKEN_USAGE = "token_usage"
    SPEECH_STARTED = "speech_started"
    SPEECH_STOPPED = "speech_stopped"
    METRIC = "metric"
    END_CONVERSATION = "end_conversation"
    LOG = "log"
    STATE_SYNC = "state_sync"
    SEQUENCE_GAP = "sequence_gap"
    AUDIO_DROPPED = "audio_dropped"
    MALFORMED_EVENT = "malformed_event"
    SESSION_ERROR = "session_error"
    NOTICE = "notice"
    #: Keypad digits: from the user, keys it pressed (with how the bridge carried
    #: them); from the agent, the digits it detected (vae/dtmf.py).
    DTMF = "dtmf"
    #: A call the session's tool backend served (bridge_service/tools): tool, arguments,
    #: status, result, transport. Recorded by the bridge, on the agent's side.
    TOOL_BACKEND_CALL = "tool_backend_call"
    #: The session's tool backend started (its addresses, its tools) or stopped.
    TOOL_BACKEND = "tool_backend"


class Verdict(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_APPLICABLE = "not_applicable"
    #: The scorer could not decide (e.g. judge_error): neither pass nor fail.
    UNSCORED = "unscored"


@dataclass(frozen=True, slots=True)
class RunRecord:
    run_id: str
    created_ns: int
    status: RunStatus
    vae_version: str
    options: dict[str, object] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    finished_ns: int | None = None
    #: "bridge" for recorded runs, "import:nemo" for imported ones.
    source: str = "bridge"
    #: Why the run failed, when it did.
    error: str = ""


@dataclass(frozen=True, slots=True)
class RunScenario:
    run_id: str
    scenario_name: str
    ordinal: int
    domain: str
    #: The scenario as run, frozen (the validated document).
    scenario: dict[str, object]


@dataclass(frozen=True, slots=True)
class SessionRecord:
    session_id: str
    run_id: str
    scenario_name: str
    attempt: int
    status: SessionStatus
    started_ns: int
    ended_ns: int | None = None
    stop_reason: str | None = None
    stop_detail: str = ""
    clean_exit: bool | None = None
    user_turns: int = 0
    agent_turns: int = 0
    user_bot: dict[str, object] = field(default_factory=dict)
    agent_bot: dict[str, object] = field(default_factory=dict)
    #: Formats, frame length, jitter buffer, resampler delays, noise settings.
    audio: dict[str, object] = field(default_factory=dict)
    retry_reason: str = ""
    superseded_reason: str = ""

    @property
    def duration_s(self) -> float:
        if self.ended_ns is None:
            return 0.0
        return (self.ended_ns - self.started_ns) / 1e9


@dataclass(frozen=True, slots=True)
class SessionMode:
    """How a session's bots talked and on which clock (``sessions.modality``/``clock``).

    ``audio``/``text``; ``real``/``virtual`` (``RunOptions.modality``/``clock``: with
    ``--clock auto``, the clock chosen for the session; ``auto`` only for an attempt whose
    bots never paired, so no clock was chosen).
    A text session has no audio channels; audio-only signals are not scored on it
    (docs/scoring.md, "Text sessions").
    """

    modality: str = "audio"
    clock: str = "real"

    @property
    def text(self) -> bool:
        return self.modality == "text"


@dataclass(frozen=True, slots=True)
class SegmentRecord:
    """About one second of one channel: PCM16 samples plus the frame-timing index.

    ``frames`` holds one ``(sequence, samples, arrival_ns)`` row per received
    frame, so jitter and latency can be analysed without one row per frame.
    """

    session_id: str
    channel: Channel
    seq: int
    start_offset: int
    sample_count: int
    sample_rate: int
    first_arrival_ns: int
    pcm: bytes
    frames: bytes


@dataclass(frozen=True, slots=True)
class EventRecord:
    session_id: str
    side: Side
    kind: EventKind
    bridge_ns: int
    payload: dict[str, object]
    bot_ns: int = 0
    id: int | None = None


@dataclass(frozen=True, slots=True)
class FinalStateRecord:
    session_id: str
    side: Side
    received_ns: int
    state: object | None = None
    state_hash: str | None = None
    context: object | None = None


@dataclass(frozen=True, slots=True)
class ScoringRecord:
    scoring_id: str
    run_id: str
    created_ns: int
    status: str
    config: dict[str, object]
    mode: str = "append"
    versions: dict[str, object] = field(default_factory=dict)
    judge_model: str = ""
    prompt_hash: str = ""
    superseded_by: str | None = None
    summary: dict[str, object] = field(default_factory=dict)
    finished_ns: int | None = None


@dataclass(frozen=True, slots=True)
class ScoreRecord:
    scoring_id: str
    session_id: str
    signal: str
    verdict: Verdict
    value: float | None = None
    detail: dict[str, object] = field(default_factory=dict)
    error: str = ""

    @property
    def passed(self) -> bool | None:
        if self.verdict is Verdict.PASSED:
            return True
        if self.verdict is Verdict.FAILED:
            return False
        return None


@dataclass(frozen=True, slots=True)
class ArtifactRecord:
    """Raw material kept beside a run (for instance what an importer could not map)."""

    run_id: str
    name: str
    content: str
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class TranscriptRecord:
    """One turn of a recorded channel as a scoring's transcription stage heard it.

    A layer beside what the bots reported (never replacing it), tied to the
    scoring that made it; ``error`` says why a turn has no text (``asr_error``
    downstream, never "said nothing").
    """

    scoring_id: str
    session_id: str
    #: The recorded channel transcribed: user, agent, to_agent, to_user.
    channel: str
    turn: int
    start_s: float
    end_s: float
    text: str = ""
    error: str = ""
    cached: bool = False
