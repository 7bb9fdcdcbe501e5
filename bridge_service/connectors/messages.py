"""The messages that cross the connector seam, as plain dataclasses.

A session and a bot exchange these through
:class:`~vae.bridge_service.connectors.base.SideEndpoint`, whichever transport
carries them (gRPC, pipecat WebSocket, Twilio Media Streams, a replayed
recording): each endpoint converts its wire format to and from them, so the
session never sees protobuf or JSON frames. They live apart from the seam's
protocol and connector registry because they change with the conversation
contract (``vae.bridge.v1``: a new field, a new message), not with how bots
are reached. Direction bot -> bridge (what ``SideEndpoint.receive`` yields):
:data:`BotInput`; direction bridge -> bot (what ``SideEndpoint.send`` is
handed): :data:`BridgeOutput`. Import them from
``vae.bridge_service.connectors.base``, the seam's public surface.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vae.recordings.models import EventKind, Side
from vae.tools.client import BackendAddresses


# ---------------------------------------------------------------- bot -> bridge
@dataclass(frozen=True, slots=True)
class BotInfo:
    name: str = ""
    version: str = ""
    labels: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "version": self.version, "labels": dict(self.labels)}


@dataclass(frozen=True, slots=True)
class BotAudio:
    """One chunk of a bot's own speech, PCM16 LE mono at the endpoint's send rate."""

    sequence: int
    sample_offset: int
    pcm: bytes
    sent_ns: int


@dataclass(frozen=True, slots=True)
class BotEvent:
    """A non-audio event; ``payload`` uses the recorded-event convention.

    ``problem`` is set when part of the event could not be used (for instance
    malformed JSON in a tool call's arguments): the event is still recorded,
    with the raw text kept in the payload, and the bot is told by a notice.
    """

    kind: EventKind
    bot_ns: int
    payload: dict[str, Any]
    problem: str = ""


@dataclass(frozen=True, slots=True)
class JsonPiece:
    """One chunk of a JSON document (see ``vae.common.v1.JsonChunk``)."""

    offset: int
    data: bytes
    last: bool


@dataclass(frozen=True, slots=True)
class FinalStatePart:
    """Part of a bot's final state; the last part has ``done=True``."""

    state: JsonPiece | None = None
    context: JsonPiece | None = None
    done: bool = False


@dataclass(frozen=True, slots=True)
class BotText:
    """A whole turn of a bot's speech as text (a text session; ``vae.bridge.v1.TextTurn``).

    ``duration_ms`` is how long saying it would take (0: the bridge estimates it);
    only the virtual clock uses it.
    """

    text: str
    duration_ms: int = 0
    sequence: int = 0
    sent_ns: int = 0


@dataclass(frozen=True, slots=True)
class ClockAck:
    """On the virtual clock: the bot has sent everything it had for ``step``.

    ``wake_at_ms`` (text only): the session time at which the bot wants a tick
    even if nothing arrives; 0 for none.
    """

    step: int
    wake_at_ms: int = 0
    #: The bot's audio for the step, sent inside the answer (as if sent just before it).
    audio: BotAudio | None = None


BotInput = BotAudio | BotEvent | FinalStatePart | BotText | ClockAck


# ---------------------------------------------------------------- bridge -> bot
@dataclass(frozen=True, slots=True)
class SessionStartInfo:
    run_id: str
    session_id: str
    scenario_name: str
    attempt: int
    role: Side
    domain: str
    system_prompt: str
    tools: dict[str, dict[str, str]]
    initial_state: dict[str, Any]
    initialization_actions: list[dict[str, Any]]
    side_config: dict[str, Any]
    max_duration_ms: int
    share_transcripts: bool
    receive_rate: int
    #: Length of the frames this bot receives, ms, and frames per audio message.
    frame_ms: int = 16
    frames_per_message: int = 1
    #: "agent" or "user" when the run or the scenario says who opens; "" otherwise.
    first_speaker: str = ""
    #: Per-session seed (run seed x scenario/trial name) and trial index (0: not repeated).
    seed: int = 0
    trial: int = 0
    #: "audio" or "text" (``SessionStart.modality``).
    modality: str = "audio"
    #: "real" or "virtual" (``SessionStart.clock``).
    clock: str = "real"
    #: The agent's: where this session's tool backend serves its tools (None: no backend).
    tool_backend: BackendAddresses | None = None
    #: W3C trace context of the session (``SessionStart.trace_context``): the run's trace
    #: and this session's span, for the agent's own spans (docs/traces.md).
    traceparent: str = ""
    tracestate: str = ""


@dataclass(frozen=True, slots=True)
class PeerAudio:
    """One open-mic frame of the peer's audio at the endpoint's receive rate."""

    sequence: int
    sample_offset: int
    pcm: bytes
    sent_ns: int


@dataclass(frozen=True, slots=True)
class PeerEvent:
    """The peer's transcript, forwarded when the run shares transcripts."""

    bot_ns: int
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StateSyncOut:
    sequence: int
    delta: dict[str, Any]
    cause_call_id: str
    cause_side: Side


@dataclass(frozen=True, slots=True)
class NoticeOut:
    """Informational; ``code`` is one of the NoticeCode names in lower case."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class DtmfOut:
    """Keys the caller pressed, to an agent that takes them as messages.

    A Twilio Media Streams agent gets one ``dtmf`` message per key; a gRPC bot
    in a text session gets ``BridgeMessage.dtmf``. An audio gRPC agent never
    gets this: it hears the keys as in-band tones (``bridge_service/session/dtmf_out.py``).
    """

    digits: str
    tone_ms: int
    gap_ms: int


@dataclass(frozen=True, slots=True)
class SessionEndingOut:
    reason: str
    detail: str
    final_state_timeout_ms: int


@dataclass(frozen=True, slots=True)
class SessionEndedOut:
    reason: str
    clean_exit: bool


@dataclass(frozen=True, slots=True)
class PeerText:
    """The peer's whole turn as text, delivered at ``session_ms`` of the session's clock."""

    text: str
    sequence: int
    session_ms: int
    sent_ns: int


@dataclass(frozen=True, slots=True)
class ClockTickOut:
    """Text on the virtual clock: the session's time is now ``session_ms``; answer ``step``."""

    step: int
    session_ms: int


@dataclass(frozen=True, slots=True)
class RedirectOut:
    """To a gRPC bot that accepts redirects: its session runs at a worker process.

    Not part of :data:`BridgeOutput`: only the gRPC stream adapter
    (``vae.bridge_service.edge.converse_endpoint``) carries it, never a session or a connector.
    """

    port: int
    ticket: str
    worker: str
    arrive_within_ms: int
    session_id: str


BridgeOutput = (
    SessionStartInfo
    | PeerAudio
    | PeerEvent
    | StateSyncOut
    | NoticeOut
    | SessionEndingOut
    | SessionEndedOut
    | PeerText
    | ClockTickOut
    | DtmfOut
)
