"""What a scorer sees: one recorded session, loaded from the store.

A :class:`ScoringContext` is built once per session and handed to every
scorer, so scorers never touch SQLite. The scenario is the one frozen with the
run, with the scoring's overrides applied (``"*"`` first, then the scenario's
own entry), and re-validated so a bad override fails with the field it broke.

Event payloads are read tolerantly (see ``tests/factories.py`` for the
convention): a tool call's arguments may be a mapping or a JSON string, sides
and kinds may be plain (``agent``) or enum spellings (``ROLE_AGENT``).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from vae.recordings.models import (
    Channel,
    EventKind,
    EventRecord,
    FinalStateRecord,
    SessionMode,
    SessionRecord,
    Side,
    TranscriptRecord,
)
from vae.recordings.read.bot_errors import bot_errors
from vae.recordings.read.reader import ChannelAudio, RecordingReader
from vae.recordings.scenarios.model import Scenario
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.scorer_service.backend_calls import BackendCall, backend_call
from vae.scorer_service.config import ScoringConfig


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


def apply_overrides(doc: dict[str, Any], config: ScoringConfig) -> dict[str, Any]:
    """The scenario document with ``"*"`` and then its own overrides applied.

    A key replaces the scenario's value; ``add_nl_assertions`` and
    ``add_db_state_assertions`` append to the list as it stands at that point.
    """
    out = copy.deepcopy(doc)
    for key in ("*", str(doc.get("name", ""))):
        for name, value in copy.deepcopy(config.overrides.get(key, {})).items():
            if name.startswith("add_"):
                target = name.removeprefix("add_")
                current = out.get(target) or []
                added = value if isinstance(value, list) else [value]
                out[target] = [*([current] if isinstance(current, str) else current), *added]
            else:
                out[name] = value
    return out


def effective_scenario(doc: dict[str, Any], config: ScoringConfig, source: str) -> Scenario:
    """Validate the overridden document (raises ScenarioError naming the field)."""
    return scenario_from_dict(apply_overrides(doc, config), source)


def side_name(value: Any, default: str) -> str:
    text = str(value or "").lower()
    for name in ("user", "agent"):
        if text.endswith(name):
            return name
    return default


def _arguments(payload: dict[str, Any]) -> dict[str, Any]:
    args = payload.get("arguments")
    if args is None and payload.get("arguments_json"):
        try:
            args = json.loads(str(payload["arguments_json"]))
        except json.JSONDecodeError:
            args = {"_raw": payload["arguments_json"]}
    return args if isinstance(args, dict) else {"_value": args}


def _result(payload: dict[str, Any]) -> Any:
    if "result" in payload:
        return payload["result"]
    raw = payload.get("result_json")
    if not raw:
        return None
    try:
        return json.loads(str(raw))
    except json.JSONDecodeError:
        return raw


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _t(event: EventRecord, t0: int) -> float:
    return (event.bridge_ns - t0) / 1e9


def parse_events(ctx: ScoringContext, events: list[EventRecord]) -> None:
    """Fill the context's tool calls, transcripts, tokens and metrics from raw events."""
    t0 = ctx.session.started_ns
    for e in events:
        p = e.payload
        bot_side = str(e.side)
        if e.kind is EventKind.TOOL_CALL:
            args = _arguments(p)
            name = str(p.get("name", ""))
            action = p.get("action")
            ctx.tool_calls.append(
                ToolCallInfo(
                    side=side_name(p.get("side"), bot_side),
                    name=name,
                    arguments=args,
                    result=_result(p),
                    error=str(p.get("error") or ""),
                    is_write=bool(p.get("is_write", False)),
                    t_s=_t(e, t0),
                    action=dict(action) if isinstance(action, dict) else {"tool": name, **args},
                )
            )
        elif e.kind is EventKind.TRANSCRIPT:
            if not p.get("is_final", True):
                continue
            line = TranscriptLine(bot_side, _t(e, t0), str(p.get("text", "")))
            if "heard" in str(p.get("kind", "")).lower():
                ctx.heard.append(line)
                continue
            ctx.transcripts.append(line)
            ctx.bot_transcripts.append(line)
        elif e.kind is EventKind.TOOL_BACKEND_CALL:
            ctx.backend_calls.append(backend_call(p, _t(e, t0)))
        elif e.kind is EventKind.TOOL_BACKEND:
            ctx.tool_backend = ctx.tool_backend or p.get("event") == "started"
        elif e.kind is EventKind.DTMF:
            carried, why = str(p.get("carried_as", "")), str(p.get("not_delivered", ""))
            ctx.keys.append(KeyPress(bot_side, str(p.get("digits", "")), _t(e, t0), carried, why))
        elif e.kind is EventKind.TOKEN_USAGE:
            totals = ctx.tokens.setdefault(bot_side, TokenTotals())
            totals.calls += 1
            totals.prompt += _int(p.get("prompt_tokens"))
            totals.completion += _int(p.get("completion_tokens"))
        elif e.kind is EventKind.METRIC:
            value = p.get("value")
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                continue
            try:
                value = float(value)
            except ValueError:
                continue
            ctx.metrics.append(
                BotMetric(
                    bot_side,
                    str(p.get("name", "")),
                    value,
                    str(p.get("unit", "")),
                    str(p.get("component", "")),
                    _t(e, t0),
                )
            )


def load_context(
    reader: RecordingReader,
    session: SessionRecord,
    scenario: Scenario,
    config: ScoringConfig,
    run_options: dict[str, Any],
    *,
    with_audio: bool,
    channels: tuple[Channel, ...] = (Channel.USER, Channel.AGENT),
) -> ScoringContext:
    """Load everything the scorers need about ``session`` (blocking: call in a thread).

    ``channels``: the audio loaded when ``with_audio`` (the transcription stage
    also reads what was delivered to the agent).
    """
    strict = config.strict_match
    if strict is None:
        strict = bool(run_options.get("strict_match", False))
    min_turns = config.min_agent_turns
    if min_turns is None:
        min_turns = _int(run_options.get("min_agent_turns"))
    policy = config.end_policy or _policy_name(run_options.get("end_policy"))
    ctx = ScoringContext(
        session=session,
        scenario=scenario,
        domain=scenario.domain,
        strict_match=strict,
        min_agent_turns=min_turns,
        end_policy=policy,
        final_states=reader.final_states(session.session_id),
        mode=reader.session_mode(session.session_id),
    )
    parse_events(ctx, reader.events(session.session_id))
    ctx.bot_errors = bot_errors(reader, session.session_id)
    if with_audio and not ctx.mode.text:
        for channel in channels:
            ctx.audio[str(channel)] = reader.read_channel(session.session_id, channel)
    return ctx


def _policy_name(value: Any) -> str:
    text = str(value or "").lower().replace("_", "-")
    return "valid-terminal-state" if "valid-terminal" in text else "tool-only"
