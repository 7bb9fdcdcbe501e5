"""The caller keys of a side section: voice, language, behaviours, voicemail, preset.

Why a module of its own: these keys sit inline in a side section beside the
reference bots' script keys (:mod:`vae.recordings.scenarios.parts`), and the schema
generator reads them from the dataclasses here (``SIDE_INLINE``). They stay in
the side's extras, so they reach the side's bot as
``SessionStart.side_config_json`` unchanged; the meaning of every key (preset
merging, language fallback, ranges) is
:func:`~vae.recordings.scenarios.caller_settings.caller_from_config`, which
:func:`cross_check` runs so ``vae validate`` refuses what a bot could not
speak, with the field's position. Line conditions (``user.line``) are another
module's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from vae.recordings.scenarios.caller_settings import CallerConfigError, caller_from_config

Seconds = float | list[float] | None


@dataclass
class CallerVoice:
    """How the caller sounds (``user.voice``)."""

    engine: Literal["espeak", "openai"] = "espeak"
    voice: str = ""
    language: str = ""
    rate_wpm: int = field(default=205, metadata={"minimum": 80, "maximum": 450})
    pitch: int = field(default=50, metadata={"minimum": 0, "maximum": 100})


@dataclass
class CallerSilence:
    """The caller goes quiet for ``seconds`` before its reply number ``turn``."""

    turn: int = field(default=1, metadata={"minimum": 1})
    seconds: float = field(default=5.0, metadata={"minimum": 0})


@dataclass
class CallerBehaviour:
    """What the caller does besides its words (``user.behaviour``); seeded by the run."""

    pause_before_answer_s: Seconds = None
    hesitation_rate: float = field(default=0.0, metadata={"minimum": 0, "maximum": 1})
    hesitations: list[str] = field(default_factory=list)
    rate_variation: float = field(default=0.0, metadata={"minimum": 0, "maximum": 0.9})
    barge_in_probability: float = field(default=0.0, metadata={"minimum": 0, "maximum": 1})
    barge_in_after_s: Seconds = None
    silences: list[CallerSilence] = field(default_factory=list)
    hang_up_after_turn: int = field(default=0, metadata={"minimum": 0})


@dataclass
class VoicemailSpec:
    """The caller side is a voicemail box (``user.voicemail``, with ``answers_as: voicemail``)."""

    greeting: str = ""
    beep_hz: float = field(default=1000.0, metadata={"minimum": 100, "maximum": 4000})
    beep_ms: int = field(default=500, metadata={"minimum": 50, "maximum": 5000})
    expect: Literal["leave_message", "hang_up"] = "leave_message"
    within_s: float = field(default=30.0, metadata={"minimum": 1})


@dataclass
class CallerKeys:
    """The side-section keys that say who the caller is (inline in ``user``)."""

    preset: str = ""
    language: str = ""
    voice: CallerVoice | None = None
    behaviour: CallerBehaviour | None = None
    answers_as: Literal["person", "voicemail"] = "person"
    voicemail: VoicemailSpec | None = None


CLASS_DOCS: dict[str, str] = {
    "CallerVoice": "How this side sounds: the speech engine, its voice, language, rate, pitch.",
    "CallerSilence": "A long silence: the caller says nothing for `seconds` before reply `turn`.",
    "CallerBehaviour": "Caller behaviours besides the words, seeded by the run's `--seed`.",
    "VoicemailSpec": "A voicemail box answering the agent's call: greeting, beep, then it "
    "listens; its final DB says what the agent did (`voicemail.*`).",
}
FIELD_DOCS: dict[str, str] = {
    "CallerKeys.preset": "A named caller (`vae schema caller-presets`): its language, voice "
    "and behaviour, under the keys this side sets itself.",
    "CallerKeys.language": "BCP 47 tag the caller speaks (`es`, `de-DE`, `es-MX`); the "
    "eSpeak voice follows it. Default `en`.",
    "CallerKeys.voice": "The caller's voice (engine, voice, language, rate, pitch).",
    "CallerKeys.behaviour": "Pauses, hesitations, rate changes, barge-ins, silences, hang-up.",
    "CallerKeys.answers_as": "`person` (default) or `voicemail`: the caller side plays a "
    "greeting and a beep, then records what the agent does.",
    "CallerKeys.voicemail": "The voicemail box's greeting, beep and expectation.",
    "CallerVoice.engine": "`espeak` (offline eSpeak NG, the default) or `openai` (an "
    "OpenAI-compatible /v1/audio/speech endpoint, `VAE_TTS_*`).",
    "CallerVoice.voice": "eSpeak: a variant (`m1`-`m8`, `f1`-`f5`, `klatt`, ...); openai: "
    "the endpoint's voice (`alloy`, ...). Empty: the engine's default.",
    "CallerVoice.language": "BCP 47 tag; overrides the side's `language`.",
    "CallerVoice.rate_wpm": "Speaking rate, words per minute (80-450).",
    "CallerVoice.pitch": "eSpeak pitch, 0-100 (50 is the voice's own).",
    "CallerSilence.turn": "Before which of the caller's replies (1-based).",
    "CallerSilence.seconds": "How long the caller stays silent.",
    "CallerBehaviour.pause_before_answer_s": "Extra pause before each reply: seconds, or "
    "`[min, max]` drawn per reply.",
    "CallerBehaviour.hesitation_rate": "Share of words preceded by a filler (0-1).",
    "CallerBehaviour.hesitations": "The fillers; default by language (`um`/`uh`, `eh`/`este`, "
    "`äh`/`ähm` ...).",
    "CallerBehaviour.rate_variation": "Each reply's speaking rate varies by up to this "
    "fraction (0-0.9) around `voice.rate_wpm`.",
    "CallerBehaviour.barge_in_probability": "Chance per agent turn that the caller starts "
    "its reply before the agent finishes (0-1).",
    "CallerBehaviour.barge_in_after_s": "When it barges in: seconds after the agent starts "
    "speaking, or `[min, max]`. Default `[0.4, 1.2]`.",
    "CallerBehaviour.silences": "Long silences: `[{turn: 2, seconds: 8}]`.",
    "CallerBehaviour.hang_up_after_turn": "Hang up instead of reply N (an early hang-up); "
    "0: never.",
    "VoicemailSpec.greeting": "What the voicemail says before the beep.",
    "VoicemailSpec.beep_hz": "The beep's frequency.",
    "VoicemailSpec.beep_ms": "The beep's length.",
    "VoicemailSpec.expect": "What the agent should do: `leave_message` (speak after the "
    "beep, then hang up) or `hang_up` (end the call without a message). Adds the matching "
    "DB_STATE_ASSERTIONs on the user side.",
    "VoicemailSpec.within_s": "The box stops recording and hangs up this long after the beep.",
}


def voicemail_assertions(side: dict[str, Any]) -> list[dict[str, Any]]:
    """The DB assertions a voicemail's ``expect`` stands for (judged as DB_STATE_ASSERTION).

    The voicemail bot keeps ``voicemail.message_s`` (seconds the agent spoke
    after the beep) and ``voicemail.cut_off`` (the box hung up at ``within_s``)
    in its DB; the agent is expected to end the call itself either way.
    """
    try:
        caller = caller_from_config(side)
    except CallerConfigError:
        return []
    if caller.voicemail is None:
        return []
    vm = caller.voicemail
    within = f"the agent ended the call within {vm.within_s:g} s of the beep"
    left = {"side": "user", "path": "voicemail.cut_off", "op": "eq", "value": False,
            "message": within}  # fmt: skip
    if vm.expect == "leave_message":
        spoke = {"side": "user", "path": "voicemail.message_s", "op": "gt", "value": 1.0,
                 "message": "the agent left a message after the beep"}  # fmt: skip
    else:
        spoke = {"side": "user", "path": "voicemail.message_s", "op": "lt", "value": 0.5,
                 "message": "the agent hung up without leaving a message"}  # fmt: skip
    return [spoke, left]


def cross_check(
    role: str, side: dict[str, Any], first_speaker: Any = None
) -> list[tuple[str, str]]:
    """Problems of one side's caller keys as ``(field name, problem)``; empty when fine.

    Field names read as ``user.behaviour.barge_in_probability``; the checker
    (:mod:`vae.recordings.scenarios.check`) turns them into file positions.
    """
    problems: list[tuple[str, str]] = []
    invalid: tuple[str, str] | None = None
    answers_as: Any = None
    try:  # resolved, so a preset's ``answers_as`` counts as the scenario's own
        answers_as = caller_from_config(side).answers_as
    except CallerConfigError as exc:
        answers_as = side.get("answers_as")
        invalid = (f"{role}.{exc.field}", exc.problem)
    if role == "user" and answers_as == "voicemail" and first_speaker != "user":
        problems.append(("first_speaker", "a voicemail answers the call: set "
                         "`first_speaker: user` (the agent waits for the beep)"))  # fmt: skip
    if role != "user":
        for key in ("behaviour", "answers_as", "voicemail"):
            if side.get(key) is not None:
                problems.append((f"{role}.{key}", "only the caller (`user`) has this"))
    return problems if invalid is None else [*problems, invalid]
