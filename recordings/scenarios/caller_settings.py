"""The caller a scenario asks for: voice, language, behaviours, voicemail, resolved once.

Why one resolution, in the store's scenario package: a scenario's ``user``
section (``preset``, ``language``, ``voice``, ``behaviour``, ``answers_as``,
``voicemail``) means one thing to the schema check (``vae validate``), the
bridge (which records the caller per session, ``vae runs show``) and the
reference bots (which speak it). The first two call :func:`caller_from_config`;
the bots import only the contract, so the bridge sends them the *resolved*
caller (``side_config_json["resolved_caller"]``, :func:`resolved`) and they
never re-interpret a preset or a language tag.

Precedence: the scenario's own keys over the named preset's, ``voice.language``
over ``language``. Everything here is plain data; the bots' runtime (seeded
choices, synthesis) lives in ``bots/brains/caller.py``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from vae.recordings.scenarios import voices
from vae.recordings.scenarios.presets import PRESETS


class CallerConfigError(ValueError):
    """A caller setting that cannot be used; ``field`` is its path under the side."""

    def __init__(self, field_name: str, problem: str) -> None:
        super().__init__(f"{field_name}: {problem}")
        self.field = field_name
        self.problem = problem


@dataclass(frozen=True)
class VoiceChoice:
    engine: str = "espeak"
    #: eSpeak: a variant (``f2``); openai: the endpoint's voice (``alloy``). Empty: default.
    voice: str = ""
    #: BCP 47 as written (``es-MX``).
    language: str = "en"
    rate_wpm: int = voices.DEFAULT_RATE_WPM
    pitch: int = voices.DEFAULT_PITCH

    @property
    def espeak_name(self) -> str:
        """What eSpeak is asked for (``es-419+f2``); empty for another engine."""
        if self.engine != "espeak":
            return ""
        lang = voices.espeak_language(self.language) or "en"
        return voices.espeak_voice_name(lang, voices.espeak_variant(self.voice) or "")

    def describe(self) -> str:
        """One line for tables: ``espeak es-419+f2 (es-MX) 160 wpm pitch 60``."""
        name = self.espeak_name if self.engine == "espeak" else (self.voice or "default")
        return f"{self.engine} {name} ({self.language}) {self.rate_wpm} wpm pitch {self.pitch}"


@dataclass(frozen=True)
class Behaviour:
    pause_before_answer_s: tuple[float, float] = (0.0, 0.0)
    hesitation_rate: float = 0.0
    #: Fillers to insert; empty: the language's defaults (:data:`FILLERS`).
    hesitations: tuple[str, ...] = ()
    rate_variation: float = 0.0
    barge_in_probability: float = 0.0
    barge_in_after_s: tuple[float, float] = (0.4, 1.2)
    #: ``(caller turn, seconds)``: before that reply (1-based) the caller says nothing.
    silences: tuple[tuple[int, float], ...] = ()
    #: Hang up instead of this reply (1-based); 0: never.
    hang_up_after_turn: int = 0

    def describe(self) -> str:
        parts: list[str] = []
        lo, hi = self.pause_before_answer_s
        if hi > 0:
            parts.append(f"pauses {lo:g}-{hi:g} s")
        if self.hesitation_rate:
            parts.append(f"hesitations {self.hesitation_rate:.0%}")
        if self.rate_variation:
            parts.append(f"rate ±{self.rate_variation:.0%}")
        if self.barge_in_probability:
            parts.append(f"barge-in {self.barge_in_probability:.0%}")
        parts.extend(f"silence {s:g} s before turn {t}" for t, s in self.silences)
        if self.hang_up_after_turn:
            parts.append(f"hangs up at turn {self.hang_up_after_turn}")
        return ", ".join(parts) or "none"


@dataclass(frozen=True)
class Voicemail:
    greeting: str = "You have reached the voicemail of Alex. Please leave a message after the tone."
    beep_hz: float = 1000.0
    beep_ms: int = 500
    #: ``leave_message`` (speak after the beep, then hang up) or ``hang_up`` (say nothing).
    expect: str = "leave_message"
    #: The voicemail stops recording (and hangs up) this long after the beep.
    within_s: float = 30.0


#: Filler words by primary language (used when ``behaviour.hesitations`` is empty).
FILLERS: dict[str, tuple[str, ...]] = {
    "en": ("um", "uh"),
    "es": ("eh", "este"),
    "de": ("äh", "ähm"),
    "fr": ("euh", "bah"),
    "it": ("ehm", "cioè"),
    "pt": ("hum", "é"),
    "nl": ("eh", "uhm"),
}


@dataclass(frozen=True)
class CallerSettings:
    preset: str = ""
    voice: VoiceChoice = field(default_factory=VoiceChoice)
    behaviour: Behaviour = field(default_factory=Behaviour)
    #: ``person`` (the default) or ``voicemail``.
    answers_as: str = "person"
    voicemail: Voicemail | None = None

    @property
    def fillers(self) -> tuple[str, ...]:
        primary = self.voice.language.split("-")[0].lower()
        return self.behaviour.hesitations or FILLERS.get(primary, FILLERS["en"])

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def resolved(caller: CallerSettings) -> dict[str, Any]:
    """What the bots receive (and the bridge records): the settings plus derived names."""
    record = caller.to_dict()
    record["voice"]["espeak_voice"] = caller.voice.espeak_name
    record["voice"]["summary"] = caller.voice.describe()
    record["behaviour"]["summary"] = caller.behaviour.describe()
    record["behaviour"]["fillers"] = list(caller.fillers)
    return record


CALLER_KEYS = ("preset", "language", "voice", "behaviour", "answers_as", "voicemail")


def caller_from_config(config: dict[str, Any]) -> CallerSettings:
    """The caller of a side's plain data (a scenario's ``user`` section, or side_config).

    Raises :class:`CallerConfigError` naming the field for anything unusable:
    an unknown preset, language, eSpeak voice or engine, a value out of range.
    """
    preset_name = config.get("preset") or ""
    if not isinstance(preset_name, str):
        raise CallerConfigError("preset", "must be a string")
    base: dict[str, Any] = {}
    if preset_name:
        if preset_name not in PRESETS:
            from difflib import get_close_matches

            close = get_close_matches(preset_name, list(PRESETS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise CallerConfigError("preset", f"unknown caller preset {preset_name!r}{hint}")
        base = PRESETS[preset_name]
    merged = {**base, **{k: config[k] for k in CALLER_KEYS if config.get(k) is not None}}
    for key in ("voice", "behaviour"):
        if isinstance(base.get(key), dict) and isinstance(config.get(key), dict):
            merged[key] = {**base[key], **config[key]}
    return CallerSettings(
        preset=preset_name,
        voice=_voice(merged.get("voice") or {}, merged.get("language")),
        behaviour=_behaviour(merged.get("behaviour") or {}),
        answers_as=_answers_as(merged.get("answers_as")),
        voicemail=_voicemail(merged),
    )


def _voice(raw: Any, language: Any) -> VoiceChoice:
    if not isinstance(raw, dict):
        raise CallerConfigError("voice", "must be a mapping")
    engine = raw.get("engine") or "espeak"
    if engine not in voices.ENGINES:
        raise CallerConfigError("voice.engine", f"{engine!r} is not one of: espeak, openai")
    lang_field = "voice.language" if raw.get("language") else "language"
    lang = raw.get("language") or language or "en"
    if not isinstance(lang, str):
        raise CallerConfigError(lang_field, "must be a BCP 47 tag such as 'es' or 'de-DE'")
    if problem := voices.language_problem(lang, engine):
        raise CallerConfigError(lang_field, problem)
    name = raw.get("voice") or ""
    if not isinstance(name, str):
        raise CallerConfigError("voice.voice", "must be a string")
    if engine == "espeak" and name and (problem := voices.variant_problem(name)):
        raise CallerConfigError("voice.voice", problem)
    rate = _int(raw.get("rate_wpm", voices.DEFAULT_RATE_WPM), "voice.rate_wpm", voices.RATE_RANGE)
    pitch = _int(raw.get("pitch", voices.DEFAULT_PITCH), "voice.pitch", voices.PITCH_RANGE)
    return VoiceChoice(engine, name, lang, rate, pitch)


def _behaviour(raw: Any) -> Behaviour:
    if not isinstance(raw, dict):
        raise CallerConfigError("behaviour", "must be a mapping")
    fillers = raw.get("hesitations") or ()
    if isinstance(fillers, str):
        fillers = (fillers,)
    if not all(isinstance(f, str) and f.strip() for f in fillers):
        raise CallerConfigError("behaviour.hesitations", "must be a list of words")
    silences = []
    for i, item in enumerate(raw.get("silences") or ()):
        where = f"behaviour.silences[{i}]"
        if not isinstance(item, dict):
            raise CallerConfigError(where, "must be {turn: N, seconds: S}")
        turn = _int(item.get("turn"), f"{where}.turn", (1, 10_000))
        silences.append((turn, _float(item.get("seconds"), f"{where}.seconds", (0.0, 3600.0))))
    return Behaviour(
        pause_before_answer_s=_range(raw.get("pause_before_answer_s"), "pause_before_answer_s"),
        hesitation_rate=_float(raw.get("hesitation_rate", 0.0), "behaviour.hesitation_rate"),
        hesitations=tuple(f.strip() for f in fillers),
        rate_variation=_float(
            raw.get("rate_variation", 0.0), "behaviour.rate_variation", (0.0, 0.9)
        ),
        barge_in_probability=_float(
            raw.get("barge_in_probability", 0.0), "behaviour.barge_in_probability"
        ),
        barge_in_after_s=_range(raw.get("barge_in_after_s"), "barge_in_after_s", (0.4, 1.2)),
        silences=tuple(silences),
        hang_up_after_turn=_int(
            raw.get("hang_up_after_turn", 0), "behaviour.hang_up_after_turn", (0, 10_000)
        ),
    )


def _answers_as(value: Any) -> str:
    value = value or "person"
    if value not in ("person", "voicemail"):
        raise CallerConfigError("answers_as", f"{value!r} is not one of: person, voicemail")
    return str(value)


def _voicemail(merged: dict[str, Any]) -> Voicemail | None:
    raw = merged.get("voicemail")
    if merged.get("answers_as") != "voicemail":
        if raw:
            raise CallerConfigError("voicemail", "needs `answers_as: voicemail`")
        return None
    raw = raw or {}
    if not isinstance(raw, dict):
        raise CallerConfigError("voicemail", "must be a mapping")
    d = Voicemail()
    greeting = raw.get("greeting", d.greeting)
    if not isinstance(greeting, str) or not greeting.strip():
        raise CallerConfigError("voicemail.greeting", "must be a non-empty string")
    expect = raw.get("expect", d.expect)
    if expect not in ("leave_message", "hang_up"):
        raise CallerConfigError(
            "voicemail.expect", f"{expect!r} is not one of: leave_message, hang_up"
        )
    return Voicemail(
        greeting=greeting.strip(),
        beep_hz=_float(raw.get("beep_hz", d.beep_hz), "voicemail.beep_hz", (100.0, 4000.0)),
        beep_ms=_int(raw.get("beep_ms", d.beep_ms), "voicemail.beep_ms", (50, 5000)),
        expect=str(expect),
        within_s=_float(raw.get("within_s", d.within_s), "voicemail.within_s", (1.0, 3600.0)),
    )


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CallerConfigError(where, "must be a number")
    return float(value)


def _float(value: Any, where: str, bounds: tuple[float, float] = (0.0, 1.0)) -> float:
    number = _number(value, where)
    if not bounds[0] <= number <= bounds[1]:
        raise CallerConfigError(where, f"must be between {bounds[0]:g} and {bounds[1]:g}")
    return number


def _int(value: Any, where: str, bounds: tuple[int, int]) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise CallerConfigError(where, "must be an integer")
    if not bounds[0] <= value <= bounds[1]:
        raise CallerConfigError(where, f"must be between {bounds[0]} and {bounds[1]}")
    return value


def _range(value: Any, name: str, default: tuple[float, float] = (0.0, 0.0)) -> tuple[float, float]:
    where = f"behaviour.{name}"
    if value is None:
        return default
    if not isinstance(value, list | tuple):
        value = [value, value]
    if len(value) != 2:
        raise CallerConfigError(where, "must be a number of seconds or [min, max]")
    lo, hi = (_float(v, where, (0.0, 600.0)) for v in value)
    if lo > hi:
        raise CallerConfigError(where, f"min {lo:g} is above max {hi:g}")
    return (lo, hi)
