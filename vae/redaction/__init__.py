"""Redaction of personal data in text and audio: detection, placeholders, masks.

Why beside the contract (like :mod:`vae.speech`): the bridge redacts what it
records (``vae run --redact``), the scorer lets its judge read only redacted
text (``vae rescore --redact``) and the CLI redacts stored runs and imported
calls (``vae redact``, ``vae import calls --redact``); none of them may import
another, so the engine lives below all three. It works on plain data —
strings, JSON values, int16 samples, word timings — and imports no service and
not the store: the store's rewrite (:mod:`vae.recordings.redact`) takes it as
callables.

- :mod:`~vae.redaction.entities` — the entity types and their placeholders;
- :mod:`~vae.redaction.config` — the configuration file, its JSON Schema
  (``vae schema redaction``) and its validation;
- :mod:`~vae.redaction.spoken` — spoken forms ("four one one one", "john at
  example dot com") turned into written ones, with a map back to the text
  (the numbers in :mod:`~vae.redaction.spoken_numbers`, the e-mail addresses
  in :mod:`~vae.redaction.spoken_email`);
- :mod:`~vae.redaction.recognisers` — presidio-analyzer's pattern recognisers
  set up offline (no NLP engine, no model download), plus vae's own patterns;
- :mod:`~vae.redaction.names` — names and addresses found by an optional
  OpenAI-compatible endpoint;
- :mod:`~vae.redaction.detect` — findings in one text;
- :mod:`~vae.redaction.redactor` — typed placeholders in text and JSON;
- :mod:`~vae.redaction.words` — which timed words a finding covers;
- :mod:`~vae.redaction.audio` — tone or silence over spans of samples.

presidio-analyzer is an extra (``pip install 'vae[redact]'``); without it,
:func:`~vae.redaction.redactor.make_redactor` raises
:class:`~vae.redaction.config.RedactionUnavailable` naming the extra.
"""

from __future__ import annotations

from vae.redaction.config import (
    RedactionConfig,
    RedactionConfigError,
    RedactionUnavailable,
    load_config,
)
from vae.redaction.entities import BUILT_IN, placeholder

__all__ = [
    "BUILT_IN",
    "RedactionConfig",
    "RedactionConfigError",
    "RedactionUnavailable",
    "load_config",
    "placeholder",
]
