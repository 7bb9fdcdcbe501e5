"""A scoring's configuration: its transcription settings are the speech seam's one type.

The scorer once mirrored the speech engines' settings field by field, and the
two could drift apart. These tests hold them together: there is one class
with those fields, the scorer's config and the engines both take it, and the
shape a scoring stores (``scorings.config_json``, printed whole by
``vae scores show --json``) is exactly what it was, old shapes included.
"""

from __future__ import annotations

import ast
import json
import typing
from pathlib import Path

from vae.scorer_service.config import ScoringConfig, config_from_dict
from vae.scorer_service.transcription.stage import TranscriptionStage
from vae.speech.stt import make_transcriber
from vae.speech.stt_settings import TranscriptionSettings

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("recordings", "bridge_service", "scorer_service", "cli", "bots")

FULL = TranscriptionSettings(
    "openai", "http://127.0.0.1:9/v1", "whisper-1", api_key="k", language="en", timeout_s=5.0,
    max_retries=1, backoff_s=0.25, concurrency=3, transcripts="prefer-asr", no_cache=True,
)  # fmt: skip
#: What a scoring stored under "transcription" for ``FULL`` before the two types became one,
#: byte for byte (key order included): the API key is never stored.
STORED = (
    '{"engine": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "whisper-1", '
    '"language": "en", "timeout_s": 5.0, "max_retries": 1, "backoff_s": 0.25, '
    '"concurrency": 3, "transcripts": "prefer-asr", "no_cache": true}'
)
STORED_DEFAULT = (
    '{"engine": "", "base_url": "", "model": "", "language": "", "timeout_s": 60.0, '
    '"max_retries": 3, "backoff_s": 0.5, "concurrency": 2, "transcripts": "bots", '
    '"no_cache": false}'
)


def _classes_with_stt_fields() -> list[str]:
    """Every class in vae's own code with the fields an engine's settings need."""
    needed = {"engine", "base_url", "model", "language"}
    files = [p for pkg in PRODUCT for p in (ROOT / pkg).rglob("*.py")]
    files += [p for p in (ROOT / "vae").rglob("*.py") if "_pb2" not in p.name]
    found = []
    for path in sorted(files):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                names = {
                    s.target.id
                    for s in node.body
                    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                }
                if needed <= names:
                    found.append(f"{path.relative_to(ROOT)}:{node.name}")
    return found


def test_there_is_one_transcription_settings_class() -> None:
    assert _classes_with_stt_fields() == ["vae/speech/stt_settings.py:TranscriptionSettings"]


def test_the_scorer_and_the_engines_take_that_one_class() -> None:
    assert typing.get_type_hints(ScoringConfig)["transcription"] is TranscriptionSettings
    assert typing.get_type_hints(make_transcriber)["settings"] is TranscriptionSettings
    assert typing.get_type_hints(TranscriptionStage.__init__)["settings"] is TranscriptionSettings
    assert type(ScoringConfig().transcription) is TranscriptionSettings


def test_the_stored_shape_is_unchanged_and_round_trips() -> None:
    stored = ScoringConfig(no_judge=True, transcription=FULL).to_dict()
    assert json.dumps(stored["transcription"]) == STORED
    assert json.dumps(ScoringConfig().to_dict()["transcription"]) == STORED_DEFAULT
    # Through JSON and back, as the store does: everything but the key, which is never stored.
    again = config_from_dict(json.loads(json.dumps(stored)))
    assert again.transcription == TranscriptionSettings(**{**json.loads(STORED), "api_key": ""})
    assert again.to_dict() == stored


def test_older_stored_configs_still_load() -> None:
    # Stored before the transcription stage existed: no section at all.
    before_asr = config_from_dict({"scorers": [], "no_judge": True})
    assert before_asr.transcription == TranscriptionSettings()
    assert not before_asr.transcription.enabled
    assert json.dumps(before_asr.to_dict()["transcription"]) == STORED_DEFAULT
    # A section written before ``transcripts`` and ``no_cache``, and one by a newer vae.
    partial = config_from_dict({"transcription": {"engine": "pocketsphinx", "concurrency": 1}})
    assert partial.transcription == TranscriptionSettings("pocketsphinx", concurrency=1)
    newer = config_from_dict({"transcription": {**json.loads(STORED), "diarise": True}})
    assert newer.transcription == TranscriptionSettings(**json.loads(STORED))
    # A null section, as a hand-edited or truncated config may hold.
    assert config_from_dict({"transcription": None}).transcription == TranscriptionSettings()
