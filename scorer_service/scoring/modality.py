"""The modality rule: a text session is never scored on what only audio can show.

Why: a text session (``vae run --modality text``) has no audio channels. A
signal measured from audio — response latency, talk share, barge-ins, dead
air: every ``timing.*`` figure — would read an empty recording and report
numbers that describe nothing (zero talk, the whole call as mutual silence).
So, on a text session, each audio-only signal is

- ``not_applicable`` with no value when it does not gate the scenario (the
  timing figures are informational): it has nothing to measure, and
- ``unscored`` with the cause ``modality`` when the scenario gates on it: a
  verdict that could not be reached, never ``passed`` — so its composite is
  ``unscored`` too, and ``vae rescore`` says so.

Everything else (actions, database state and assertions, NL assertions and
the judge over the transcript of text turns, the clean exit, bot-reported
metrics, tokens) is scored exactly as in audio. docs/scoring.md, "Text
sessions", states the rule; :data:`AUDIO_ONLY_PREFIXES` and
:data:`AUDIO_ONLY` are the one table of signals it applies to (a new signal
measured from audio is added there).
"""

from __future__ import annotations

from vae.recordings.models import SessionMode, Verdict
from vae.scorer_service import signals
from vae.scorer_service.scorer import SignalScore

#: Signal-name prefixes measured from the recorded audio.
AUDIO_ONLY_PREFIXES: tuple[str, ...] = (signals.TIMING_PREFIX,)
#: Single signals measured from the recorded audio, or from hearing it: in a text
#: session the agent receives the caller's words exactly, so nothing can be misheard.
AUDIO_ONLY: frozenset[str] = frozenset({signals.HEARD_CORRECTLY})
#: The cause recorded beside an unscored audio-only gating signal.
CAUSE = "modality"


def needs_audio(signal: str) -> bool:
    return signal in AUDIO_ONLY or signal.startswith(AUDIO_ONLY_PREFIXES)


def mark_modality(
    results: list[SignalScore], mode: SessionMode, gating: set[str]
) -> list[SignalScore]:
    """``results`` with the audio-only signals of a text session made not_applicable/unscored."""
    if not mode.text:
        return results
    out = []
    for r in results:
        if not needs_audio(r.signal):
            out.append(r)
            continue
        reason = f"a text session has no audio: {r.signal} is measured from audio"
        detail = {"modality": mode.modality, "clock": mode.clock, "reason": reason}
        if r.signal in gating:
            out.append(SignalScore(r.signal, Verdict.UNSCORED, None, detail, f"{CAUSE}: {reason}"))
        else:
            out.append(SignalScore(r.signal, Verdict.NOT_APPLICABLE, None, detail))
    return out
