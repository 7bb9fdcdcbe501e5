"""Speech engines: one seam for speech in and out, shared by bots and the scorer.

Why in ``vae``: the reference bots may import only the contract package, and
the scorer transcribes recorded audio with the same engines, so the engines
live beside the contract rather than in either service. :mod:`vae.speech.stt`
holds the transcription engines (an OpenAI-compatible endpoint, an embedded
pocketsphinx), built from :mod:`vae.speech.stt_settings`'s
``TranscriptionSettings`` — the one settings type for transcription, which the
scorer also stores with a scoring; :mod:`vae.speech.tts` the synthesis engine a
scenario's ``user.voice: {engine: openai}`` speaks with (an OpenAI-compatible
``/v1/audio/speech`` endpoint, cached on disk). Nothing here imports a service
or the store.

Importing this package loads no engine (no numpy): the engine names below are
imported from :mod:`vae.speech.stt` on first use, so the scorer's configuration
can name the settings type and stay light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vae.speech.stt_settings import ENGINES, TranscriptionSettings

if TYPE_CHECKING:
    from vae.speech.stt import SttConfigError, Transcriber, TranscriptionError, make_transcriber

#: Served from :mod:`vae.speech.stt` when first asked for.
_ENGINE_NAMES = frozenset(
    {"SttConfigError", "Transcriber", "TranscriptionError", "make_transcriber"}
)


def __getattr__(name: str) -> Any:
    if name in _ENGINE_NAMES:
        from vae.speech import stt

        return getattr(stt, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ENGINES",
    "SttConfigError",
    "Transcriber",
    "TranscriptionError",
    "TranscriptionSettings",
    "make_transcriber",
]
