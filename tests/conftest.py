"""Shared fixtures: store files under tmp_path, PCM helpers, tool requirements.

Tests that need an external tool (Chromium, Node.js, a pipecat venv) call
:func:`require_tool`: locally a missing tool skips the test with the command
that installs it; in CI (``CI`` set) a missing tool fails the test, so nothing
is silently skipped where it must run.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest


def require_tool(name: str, install_hint: str) -> str:
    """Return the path of executable ``name`` or skip/fail as described above."""
    path = shutil.which(name)
    if path:
        return path
    message = f"{name} not found; install it with: {install_hint}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A fresh store file path (not created yet)."""
    return tmp_path / "vae.db"


def tone(seconds: float, rate: int = 16000, freq: float = 220.0, amp: float = 0.3) -> np.ndarray:
    """A deterministic int16 tone, for audio that must survive round trips."""
    t = np.arange(int(seconds * rate)) / rate
    return (np.sin(2 * np.pi * freq * t) * amp * 32767).astype(np.int16)


@pytest.fixture
def make_tone():  # type: ignore[no-untyped-def]
    return tone


@pytest.fixture(scope="session")
def ray_instance():  # type: ignore[no-untyped-def]
    """A local Ray instance shared by this test process (tests/ray_instance.py)."""
    from tests.ray_instance import start_ray

    yield from start_ray()
