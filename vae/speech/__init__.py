"""Speech engines: one seam for speech in and out, shared by bots and the scorer.

Why in ``vae``: the reference bots may import only the contract package, and
the scorer transcribes recorded audio with the same engines, so the engines
live beside the contract rather than in either service. :mod:`vae.speech.stt`
holds the transcription engines (an OpenAI-compatible endpoint, an embedded
pocketsphinx); :mod:`vae.speech.tts` the synthesis engine a scenario's
``user.voice: {engine: openai}`` speaks with (an OpenAI-compatible
``/v1/audio/speech`` endpoint, cached on disk). Nothing here imports a
service or the store.
"""

from __future__ import annotations

from vae.speech.stt import (
    ENGINES,
    SttConfigError,
    SttSettings,
    Transcriber,
    TranscriptionError,
    make_transcriber,
)

__all__ = [
    "ENGINES",
    "SttConfigError",
    "SttSettings",
    "Transcriber",
    "TranscriptionError",
    "make_transcriber",
]
