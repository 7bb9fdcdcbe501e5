"""Named callers: a suite gets many distinct voices without spelling each one out.

A scenario's ``user.preset: maria-es`` stands for the preset's ``language``,
``voice`` and ``behaviour``; keys the scenario sets itself win (a preset's
``voice`` or ``behaviour`` mapping is merged key by key). ``vae schema
caller-presets`` prints this table. Every preset uses the offline eSpeak NG
engine, so a suite that names them runs anywhere the reference bots do.
"""

from __future__ import annotations

from typing import Any

PRESETS: dict[str, dict[str, Any]] = {
    "alex-en": {
        "language": "en-US",
        "voice": {"engine": "espeak", "voice": "m3", "rate_wpm": 190, "pitch": 45},
    },
    "sam-en-gb": {
        "language": "en-GB",
        "voice": {"engine": "espeak", "voice": "f2", "rate_wpm": 180, "pitch": 60},
    },
    "hesitant-en": {
        "language": "en-US",
        "voice": {"engine": "espeak", "voice": "f3", "rate_wpm": 150, "pitch": 55},
        "behaviour": {
            "pause_before_answer_s": [0.8, 1.8],
            "hesitation_rate": 0.15,
            "rate_variation": 0.15,
        },
    },
    "impatient-en": {
        "language": "en-US",
        "voice": {"engine": "espeak", "voice": "m1", "rate_wpm": 240, "pitch": 40},
        "behaviour": {"barge_in_probability": 0.6, "barge_in_after_s": [0.4, 0.9]},
    },
    "maria-es": {
        "language": "es-ES",
        "voice": {"engine": "espeak", "voice": "f2", "rate_wpm": 170, "pitch": 60},
    },
    "diego-es-mx": {
        "language": "es-MX",
        "voice": {"engine": "espeak", "voice": "m2", "rate_wpm": 175, "pitch": 45},
        "behaviour": {"hesitation_rate": 0.1},
    },
    "jonas-de": {
        "language": "de-DE",
        "voice": {"engine": "espeak", "voice": "m1", "rate_wpm": 170, "pitch": 45},
    },
    "lena-de": {
        "language": "de-DE",
        "voice": {"engine": "espeak", "voice": "f4", "rate_wpm": 165, "pitch": 60},
        "behaviour": {"pause_before_answer_s": [0.5, 1.2]},
    },
    "claire-fr": {
        "language": "fr-FR",
        "voice": {"engine": "espeak", "voice": "f1", "rate_wpm": 175, "pitch": 58},
    },
    "ana-pt-br": {
        "language": "pt-BR",
        "voice": {"engine": "espeak", "voice": "f5", "rate_wpm": 175, "pitch": 55},
    },
    "elderly-en": {
        "language": "en-GB",
        "voice": {"engine": "espeak", "voice": "grandpa", "rate_wpm": 130, "pitch": 35},
        "behaviour": {"pause_before_answer_s": [1.0, 2.5], "hesitation_rate": 0.2},
    },
    "office-voicemail": {
        "language": "en-US",
        "voice": {"engine": "espeak", "voice": "f2", "rate_wpm": 180, "pitch": 60},
        "answers_as": "voicemail",
    },
}
