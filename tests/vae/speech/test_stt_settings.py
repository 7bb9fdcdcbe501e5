"""The one transcription settings type is light to import and shared by engine and scorer.

The scorer's configuration names :class:`TranscriptionSettings`; importing it
must not load an engine (numpy, the ``openai`` client), so the settings live
apart from :mod:`vae.speech.stt` and the package imports the engines only
when one of their names is asked for.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

import vae.speech
from vae.speech import stt
from vae.speech.stt_settings import ENGINES, TranscriptionSettings

PROBE = """
import sys
import {module}
print(",".join(m for m in ("numpy", "openai", "vae.speech.stt") if m in sys.modules))
"""


@pytest.mark.parametrize("module", ["vae.speech.stt_settings", "vae.scorer_service.config"])
def test_importing_the_settings_loads_no_engine(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.strip() == "", done.stdout


def test_the_package_still_names_the_engines() -> None:
    assert vae.speech.make_transcriber is stt.make_transcriber
    assert vae.speech.TranscriptionError is stt.TranscriptionError
    assert vae.speech.TranscriptionSettings is TranscriptionSettings
    assert vae.speech.ENGINES == stt.ENGINES == ENGINES
    with pytest.raises(AttributeError, match="no attribute 'SttSettings'"):
        _ = vae.speech.SttSettings  # type: ignore[attr-defined]


async def test_settings_are_frozen_and_an_engine_keeps_them() -> None:
    settings = TranscriptionSettings("openai", "http://127.0.0.1:9/v1", "whisper-1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.model = "other"  # type: ignore[misc]
    engine = stt.make_transcriber(settings)
    try:
        assert engine.describe()["model"] == "whisper-1"
    finally:
        await engine.close()
    assert settings.enabled and not TranscriptionSettings().enabled
