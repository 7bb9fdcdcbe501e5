"""``make bench`` runs every ``benchmarks/*.py`` with ``--quick``: each must accept it.

Only the option is checked here (``--help``); the benchmarks themselves are
run by hand, never in the test suite.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", BENCHMARKS, ids=[p.name for p in BENCHMARKS])
def test_every_benchmark_has_a_quick_size(script: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(script), "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "--quick" in done.stdout


def test_the_makefile_names_only_files_that_exist() -> None:
    makefile = (ROOT / "Makefile").read_text()
    for name in re.findall(r"\b(?:benchmarks|docs|scripts)/[\w./-]+\.(?:md|py|sh)\b", makefile):
        assert (ROOT / name).exists(), name
