"""The caller's voice and behaviours at run time: seeded choices, one synthesiser per session.

Why apart from the script player: a scenario's ``user.voice``,
``user.language`` and ``user.behaviour`` change *how* each scripted line is
delivered, not what the script is. The bridge resolves them (presets, the
BCP 47 to eSpeak mapping, defaults: ``recordings/scenarios/caller_settings.py``)
and sends the result as ``side_config_json["resolved_caller"]``; this module
only reads that plain data (:class:`Caller`). :class:`CallerRuntime` draws
every choice from a ``random.Random`` seeded with ``SessionStart.seed`` in a
fixed order (one draw set per reply), so the same ``--seed`` gives the same
pauses, fillers, rates, barge-ins and silences; each choice is logged as it
is made, so the recording says what the caller did. Waits go through the
conversation (and so the gate): behaviours hold on the virtual clock too.

In a text session the voice does not apply (nothing is synthesised) and
neither do barge-ins (a text turn cannot be interrupted); hesitations are
inserted as text, pauses and silences are session time.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vae.bots.brains.conversation import Conversation
from vae.bots.sound.speech import EspeakSynthesiser, espeak_voice

#: The key of side_config_json the bridge puts the resolved caller under.
RESOLVED_KEY = "resolved_caller"
#: eSpeak's rate at 1.0x (an openai voice's ``speed`` is rate_wpm / this).
BASE_RATE_WPM = 205
RATE_RANGE = (80, 450)


def _pair(value: Any, default: tuple[float, float]) -> tuple[float, float]:
    if isinstance(value, list | tuple) and len(value) == 2:
        return float(value[0]), float(value[1])
    return default


@dataclass(frozen=True)
class Caller:
    """The resolved caller as the bridge sent it (plain data, already validated)."""

    engine: str = "espeak"
    voice: str = ""
    language: str = "en"
    espeak_voice: str = "en"
    rate_wpm: int = BASE_RATE_WPM
    pitch: int = 50
    summary: str = ""
    pause_s: tuple[float, float] = (0.0, 0.0)
    hesitation_rate: float = 0.0
    fillers: tuple[str, ...] = ("um", "uh")
    rate_variation: float = 0.0
    barge_in_probability: float = 0.0
    barge_in_after_s: tuple[float, float] = (0.4, 1.2)
    silences: tuple[tuple[int, float], ...] = ()
    hang_up_after_turn: int = 0
    behaviour_summary: str = "none"
    answers_as: str = "person"
    voicemail: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, record: dict[str, Any]) -> Caller:
        v = record.get("voice") or {}
        b = record.get("behaviour") or {}
        return cls(
            engine=str(v.get("engine", "espeak")),
            voice=str(v.get("voice", "")),
            language=str(v.get("language", "en")),
            espeak_voice=str(v.get("espeak_voice") or "en"),
            rate_wpm=int(v.get("rate_wpm", BASE_RATE_WPM)),
            pitch=int(v.get("pitch", 50)),
            summary=str(v.get("summary", "")),
            pause_s=_pair(b.get("pause_before_answer_s"), (0.0, 0.0)),
            hesitation_rate=float(b.get("hesitation_rate", 0.0)),
            fillers=tuple(str(f) for f in b.get("fillers") or ("um", "uh")),
            rate_variation=float(b.get("rate_variation", 0.0)),
            barge_in_probability=float(b.get("barge_in_probability", 0.0)),
            barge_in_after_s=_pair(b.get("barge_in_after_s"), (0.4, 1.2)),
            silences=tuple((int(t), float(sec)) for t, sec in b.get("silences") or ()),
            hang_up_after_turn=int(b.get("hang_up_after_turn", 0)),
            behaviour_summary=str(b.get("summary", "none")),
            answers_as=str(record.get("answers_as", "person")),
            voicemail=dict(record.get("voicemail") or {}),
        )

    @property
    def has_behaviour(self) -> bool:
        return self.behaviour_summary not in ("", "none")


@dataclass(frozen=True)
class ReplyPlan:
    """How the caller delivers one reply (drawn before it waits for its cue)."""

    number: int
    hang_up: bool = False
    #: Barge in this long after the agent starts speaking (None: wait for its turn's end).
    barge_after_s: float | None = None
    pause_s: float = 0.0
    silence_s: float = 0.0
    rate_wpm: int = BASE_RATE_WPM


class VoiceFailed(Exception):
    """The session's voice could not synthesise a line (the engine's message says why)."""


class CallerSynth:
    """A session's voice: the engine the scenario names, resampled to the bot's send rate."""

    def __init__(self, engine: Any, source_rate: int, sample_rate: int, rate_wpm: int) -> None:
        self.engine = engine
        self.name = str(getattr(engine, "name", "caller"))
        self.source_rate = source_rate
        self.sample_rate = sample_rate
        self.base_rate = rate_wpm
        #: This reply's rate (set by the runtime before each ``say``).
        self.rate_wpm = rate_wpm

    def synthesise(self, text: str) -> np.ndarray:
        from vae.speech.stt import to_rate

        try:
            if isinstance(self.engine, EspeakSynthesiser):
                pcm = self.engine.synthesise_at(text, self.rate_wpm)
            else:
                speed = self.rate_wpm / BASE_RATE_WPM
                pcm = self.engine.synthesise(text, speed=round(speed, 3))
        except Exception as exc:  # the engine's own error (SpeechError, OSError ...)
            raise VoiceFailed(str(exc)) from exc
        return to_rate(pcm, self.source_rate, self.sample_rate)


def build_synth(caller: Caller, sample_rate: int) -> CallerSynth:
    """The synthesiser of the caller's voice (OSError / SpeechError when it cannot speak)."""
    if caller.engine == "openai":
        from vae.speech.tts import OpenAISpeech, TtsSettings

        engine: Any = OpenAISpeech(TtsSettings(voice=caller.voice or "alloy"))
        return CallerSynth(engine, engine.sample_rate, sample_rate, caller.rate_wpm)
    espeak = espeak_voice(caller.espeak_voice, caller.rate_wpm, caller.pitch)
    return CallerSynth(espeak, espeak.sample_rate, sample_rate, caller.rate_wpm)


#: Side keys that ask for a voice of their own (else the bot's default voice speaks).
VOICE_KEYS = ("preset", "language", "voice")


class CallerRuntime:
    """One session's caller: its settings, its seeded choices, its voice."""

    def __init__(self, caller: Caller, seed: int, text: bool) -> None:
        self.caller = caller
        self.text = text
        self.rng = random.Random(f"vae-caller:{seed}")
        self.replies = 0
        self.synth: CallerSynth | None = None

    @classmethod
    async def start(cls, conv: Conversation) -> CallerRuntime | None:
        """The side's caller as the bridge resolved it, its voice set up (None: none sent).

        Raises (OSError, SpeechError ...) when the voice cannot speak.
        """
        config = conv.info.side_config
        record = config.get(RESOLVED_KEY)
        if not isinstance(record, dict):
            return None
        caller = Caller.of(record)
        runtime = cls(caller, conv.info.seed, conv.info.text)
        wants_voice = any(config.get(k) for k in VOICE_KEYS) or caller.rate_variation > 0
        role = conv.info.role
        if conv.info.text:
            await conv.log(f"{role} speaks {caller.language}; voice not applicable (text)")
        elif wants_voice:
            runtime.synth = await asyncio.to_thread(build_synth, caller, conv.voice.sample_rate)
            conv.synth = runtime.synth
            await conv.log(f"{role} voice: {caller.summary}")
        if caller.has_behaviour:
            described = caller.behaviour_summary
            await conv.log(f"caller behaviour: {described} (seed {conv.info.seed})")
        return runtime

    def next_reply(self) -> ReplyPlan:
        """Draw the next reply's choices (always the same draws, in the same order)."""
        b = self.caller
        self.replies += 1
        n = self.replies
        barge_draw, barge_at = self.rng.random(), self.rng.uniform(*b.barge_in_after_s)
        pause = self.rng.uniform(*b.pause_s)
        variation = self.rng.uniform(-b.rate_variation, b.rate_variation)
        rate = round(b.rate_wpm * (1 + variation))
        rate = min(max(rate, RATE_RANGE[0]), RATE_RANGE[1])
        silence = sum(s for t, s in b.silences if t == n)
        barges = barge_draw < b.barge_in_probability and not self.text
        return ReplyPlan(
            number=n,
            hang_up=b.hang_up_after_turn == n,
            barge_after_s=barge_at if barges else None,
            pause_s=pause,
            silence_s=silence,
            rate_wpm=rate,
        )

    def dress(self, text: str) -> tuple[str, int]:
        """The line with fillers inserted at the hesitation rate; and how many."""
        rate = self.caller.hesitation_rate
        if rate <= 0:
            return text, 0
        fillers = self.caller.fillers
        out: list[str] = []
        added = 0
        for word in text.split():
            if self.rng.random() < rate:
                out.append(f"{self.rng.choice(fillers)},")
                added += 1
            out.append(word)
        return " ".join(out), added

    async def cue(self, conv: Conversation, plan: ReplyPlan, delay_s: float) -> None:
        """Wait for this reply's cue: a barge-in into the agent's turn, or its end and pauses."""
        if plan.barge_after_s is not None:
            if not conv.listener.speaking:
                await conv.wait_peer_speech()
            await conv.log(f"caller behaviour: barge-in {plan.barge_after_s:.2f} s into the "
                           f"agent's turn (reply {plan.number})")  # fmt: skip
            await conv.wait_seconds(plan.barge_after_s)
            return
        await conv.wait_peer_turn()
        if plan.silence_s:
            quiet = f"silent for {plan.silence_s:g} s (reply {plan.number})"
            await conv.log(f"caller behaviour: {quiet}")
        if plan.pause_s:
            await conv.log(f"caller behaviour: pause {plan.pause_s:.2f} s (reply {plan.number})")
        await conv.wait_seconds(delay_s + plan.pause_s + plan.silence_s)

    async def before_say(self, conv: Conversation, plan: ReplyPlan | None, text: str) -> str:
        """The words to say for ``text`` (fillers in), the voice set to this reply's rate."""
        said, added = self.dress(text)
        if added:
            await conv.log(f"caller behaviour: {added} hesitation(s) inserted")
        if self.synth is not None and plan is not None and plan.rate_wpm != self.synth.rate_wpm:
            self.synth.rate_wpm = plan.rate_wpm
            await conv.log(f"caller behaviour: speaking at {plan.rate_wpm} wpm")
        return said
