"""What a scorer sees: one recorded session, as plain records.

A :class:`ScoringContext` is built once per session and handed to every
scorer, so scorers never touch SQLite. This module is its shape, what every
scorer depends on; it is loaded from the store by
:mod:`vae.scorer_service.context_load`, and its scenario is the one frozen
with the run with the scoring's overrides applied
(:mod:`vae.scorer_service.overrides`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vae.recordings.models import (
    FinalStateRecord,
    SessionMode,
    SessionRecord,
    Side,
    TranscriptRecord,
)
from vae.recordings.read.reader import ChannelAudio
from vae.recordings.scenarios.model import Scenario
from vae.scorer_service.backend_calls import BackendCall


@dataclass(frozen=True)
class ToolCallInfo:
    side: str
    name: str
    arguments: dict[str, Any]
    result: Any
    error: str
    is_write: bool
    t_s: float
    #: The action as the bot recorded it, if it sent one; else ``{"tool": name, **arguments}``.
    action: dict[str, Any]


@dataclass(frozen=True)
class TranscriptLine:
    side: str
    t_s: float
    text: str


@dataclass(frozen=True)
class BotMetric:
    side: str
    name: str
    value: float
    unit: str
    component: str
    t_s: float


@dataclass(frozen=True)
class KeyPress:
    """Keypad digits: keyed by the user, or reported heard by the agent (EventKind.DTMF)."""

    side: str
    digits: str
    t_s: float
    #: The user's: how the bridge carried them (``carried_as``), and why not, if it did not.
    carried_as: str = ""
    not_delivered: str = ""


@dataclass
class TokenTotals:
    calls: int = 0
    prompt: int = 0
    completion: int = 0


@dataclass
class ScoringContext:
    session: SessionRecord
    scenario: Scenario
    domain: str
    strict_match: bool
    min_agent_turns: int
    end_policy: str
    tool_calls: list[ToolCallInfo] = field(default_factory=list)
    #: The conversation as the judge reads it: each side's words (from its bot, or from
    #: the transcription stage: :mod:`vae.scorer_service.transcription.words`).
    transcripts: list[TranscriptLine] = field(default_factory=list)
    #: What each bot reported saying (SPOKEN), kept when ``transcripts`` is rebuilt.
    bot_transcripts: list[TranscriptLine] = field(default_factory=list)
    #: What each bot reported hearing (HEARD, final): ``side`` is the listener.
    heard: list[TranscriptLine] = field(default_factory=list)
    #: The transcription stage's per-turn text of the recorded channels (empty: none ran).
    asr: list[TranscriptRecord] = field(default_factory=list)
    #: The channels that stage transcribed (a silent one has no turns, yet was heard).
    asr_channels: list[str] = field(default_factory=list)
    #: The stage's engine configuration, and the failed turns ``transcripts`` depends on.
    asr_engine: dict[str, Any] = field(default_factory=dict)
    conversation_errors: list[str] = field(default_factory=list)
    tokens: dict[str, TokenTotals] = field(default_factory=dict)
    #: Errors the bots reported during the call (``vae.recordings.read.bot_errors``).
    bot_errors: list[str] = field(default_factory=list)
    metrics: list[BotMetric] = field(default_factory=list)
    final_states: dict[Side, FinalStateRecord] = field(default_factory=dict)
    #: Channels ``user`` and ``agent`` on the bridge clock; empty unless loaded.
    audio: dict[str, ChannelAudio] = field(default_factory=dict)
    #: Audio or text, real or virtual clock (a text session has no audio: modality.py).
    mode: SessionMode = field(default_factory=SessionMode)
    #: Keypad digits keyed (user) and heard (agent), in order (DTMF_RECEIVED).
    keys: list[KeyPress] = field(default_factory=list)
    #: Whether a tool backend served this session, and the calls it served, in order.
    tool_backend: bool = False
    backend_calls: list[BackendCall] = field(default_factory=list)

    @property
    def write_actions(self) -> list[dict[str, Any]]:
        """Write actions of both sides, each tagged with its ``side`` (as established)."""
        return [dict(c.action, side=c.side) for c in self.tool_calls if c.is_write and not c.error]

    @property
    def stalled(self) -> bool:
        return self.min_agent_turns > 0 and self.session.agent_turns < self.min_agent_turns

    def state(self, side: str) -> Any:
        record = self.final_states.get(Side(side))
        return None if record is None else record.state

    def context_history(self, side: str) -> Any:
        record = self.final_states.get(Side(side))
        return None if record is None else record.context
