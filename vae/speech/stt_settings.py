"""The one settings type for transcription, shared by the engines and the scorer.

Why one type in its own module: the scorer's transcription stage
(``vae rescore --transcribe``) stores its settings whole with each scoring and
hands them to the engines of :mod:`vae.speech.stt`; the bots give the same
settings to the same engines. Two copies of these fields drifted apart field
by field, so there is one :class:`TranscriptionSettings`, here, below the
scorer (the scorer imports it; nothing here imports a service). The module is
light — no numpy, no engine — so the scorer's configuration imports it without
loading any engine; the engines live in :mod:`vae.speech.stt`.

The field order is the stored order: a scoring's ``config_json`` holds these
fields (all but ``api_key``) in this order under ``"transcription"``, and
``vae scores show --json`` prints them so. Add a field at the end with a
default, never rename one: older stored scorings must still load.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Transcription engines, by the name ``engine`` takes (:func:`vae.speech.stt.make_transcriber`).
ENGINES = ("openai", "pocketsphinx")
#: Where the scorer takes each side's words from (the ``transcripts`` field).
TRANSCRIPT_SOURCES = ("bots", "asr", "prefer-asr")


@dataclass(frozen=True)
class TranscriptionSettings:
    """A transcription engine's settings, and how the scorer uses its text.

    An engine reads ``engine`` through ``concurrency``; ``transcripts`` and
    ``no_cache`` are the scorer's (its stage and its cache) and engines ignore
    them. Frozen: an engine keeps the settings it was built with.
    """

    #: "" (none: the scorer runs no transcription stage), "openai" or "pocketsphinx".
    engine: str = ""
    #: ``openai``: the endpoint, e.g. http://127.0.0.1:8000/v1.
    base_url: str = ""
    model: str = ""
    #: Sent as a bearer token; never stored (left out of a scoring's config), never
    #: part of an engine's ``describe()``.
    api_key: str = ""
    #: ISO-639-1 hint ("en"); empty: the engine decides.
    language: str = ""
    timeout_s: float = 60.0
    #: Retries on 429, 5xx, timeouts and connection errors.
    max_retries: int = 3
    #: First retry delay; doubles per attempt.
    backoff_s: float = 0.5
    #: Transcriptions at once.
    concurrency: int = 2
    #: The scorer: each side's words are what its bot reported (ASR fills a side
    #: that reported nothing), the transcription only, or the transcription where
    #: it succeeded (one of ``TRANSCRIPT_SOURCES``).
    transcripts: str = "bots"
    #: The scorer: transcribe again even when its cache holds the turn (fresh
    #: text refreshes the cache).
    no_cache: bool = False

    @property
    def enabled(self) -> bool:
        """Whether an engine is named (the scorer's stage runs only then)."""
        return bool(self.engine)
