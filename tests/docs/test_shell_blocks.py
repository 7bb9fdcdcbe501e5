"""Every shell block in the documentation runs as written.

Convention (for everyone writing docs):

- Every fenced block whose language is ``sh``, ``bash``, ``shell`` or
  ``console`` in ``README.md``, ``examples/README.md`` and ``docs/*.md`` (new
  files are picked up by the glob) is run by this test, unless the line right
  before its opening fence is exactly ``<!-- illustrative -->`` (for what a
  test cannot run: ``make test``, servers that run until interrupted, other
  people's bots). In a ``console`` block only the lines starting with ``$ ``
  are commands. Never put a comment after a line continuation.
- Each document's blocks run in order with ``bash -euo pipefail``, in one
  fresh temporary directory per document (like a reader following the page
  from the top), holding a copy of ``examples/`` and ``vae-demo.db``, a demo
  database as ``make demo`` leaves it (made once per test session by
  ``vae demo`` on two of the example scenarios). Every block must exit 0.
- ``vae`` on PATH is this checkout's CLI (``tests/docs/vae_docs_shim.py``).
  Placeholders a reader fills in by hand are filled in when the command runs,
  from the database the command names: ``RUN`` (the newest run),
  ``SCORING_A``/``SCORING_B`` (that run's two newest scorings, older first),
  ``SESSION_ID`` (its first session). The stand-in judge's documented address
  ``127.0.0.1:8090`` reaches a stand-in judge this test serves.
- A fenced block preceded by ``<!-- file: PATH -->`` is written to PATH
  (relative to the temporary directory) when the page reaches it, so a page
  can show a file and then use it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from vae.bots.stand_in.offline_judge import offline_judge_server

ROOT = Path(__file__).resolve().parents[2]
SHIM = Path(__file__).with_name("vae_docs_shim.py")
SHELLS = {"sh", "bash", "shell", "console"}
ILLUSTRATIVE = "<!-- illustrative -->"
FILE_MARK = re.compile(r"^<!-- file: (\S+) -->$")
FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")
DEMO_SCENARIOS = ("restaurant_book_table", "restaurant_cancel_booking")


def documents() -> list[Path]:
    docs = [ROOT / "README.md", ROOT / "examples" / "README.md"]
    return [p for p in docs if p.exists()] + sorted((ROOT / "docs").glob("*.md"))


@dataclass(frozen=True)
class Block:
    line: int  # 1-based line of the opening fence
    language: str
    text: str
    before: str  # the line right before the opening fence

    @property
    def file(self) -> str | None:
        match = FILE_MARK.match(self.before)
        return match.group(1) if match else None

    @property
    def runs(self) -> bool:
        return self.language in SHELLS and self.before != ILLUSTRATIVE

    def script(self) -> str:
        if self.language != "console":
            return self.text
        return "\n".join(x[2:] for x in self.text.splitlines() if x.startswith("$ "))


def blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, language = match.group(1), match.group(2).lower()
        end = i + 1
        while end < len(lines) and not lines[end].startswith(fence):
            end += 1
        before = lines[i - 1].strip() if i else ""
        out.append(Block(i + 1, language, "\n".join(lines[i + 1 : end]) + "\n", before))
        i = end + 1
    return out


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bin")
    vae = folder / "vae"
    vae.write_text(f'#!/bin/sh\nexec {sys.executable} {SHIM} "$@"\n')
    vae.chmod(0o755)
    return folder


@pytest.fixture(scope="module")
def env(bin_dir: Path) -> Iterator[dict[str, str]]:
    with offline_judge_server() as judge:
        host, port = judge.server_address[:2]
        yield {
            **{k: v for k, v in os.environ.items() if not k.startswith("VAE_")},
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": str(ROOT),
            "VAE_DOCS_JUDGE_ADDRESS": f"{host}:{port}",
        }


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    """A demo database as ``make demo`` leaves it (smaller: two scenarios)."""
    folder = tmp_path_factory.mktemp("demo")
    suite = folder / "suite"
    suite.mkdir()
    for name in DEMO_SCENARIOS:
        shutil.copy(ROOT / "examples" / "suite" / f"{name}.yaml", suite)
    done = subprocess.run(
        ["vae", "demo", "--suite", str(suite), "--db", "vae-demo.db", "--tts", "buzz", "--json"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return folder / "vae-demo.db"


def test_every_document_is_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in documents()}
    # The pages whose blocks run (README's walk, the worked example, labels,
    # transcription, callers, the gate): moving one must not lose its blocks.
    runs = {"README.md", "docs/scenarios.md", "docs/scoring.md", "docs/heard.md",
            "docs/callers.md", "docs/ci.md"}  # fmt: skip
    assert {"examples/README.md", *runs} <= names
    for name in runs:
        assert any(b.runs for b in blocks(ROOT / name)), f"{name} has no block that runs"


def test_no_comment_after_a_line_continuation() -> None:
    for doc in documents():
        for block in blocks(doc):
            if block.language in SHELLS:
                bad = re.search(r"\\[ \t]*#|#[^\n]*\\\n", block.text)
                assert not bad, f"{doc}:{block.line}: a comment next to a line continuation"


@pytest.mark.timeout(900)
@pytest.mark.parametrize("doc", documents(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_shell_blocks_run_as_written(
    doc: Path, tmp_path: Path, env: dict[str, str], demo_db: Path
) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=_ignored)
    shutil.copy(demo_db, tmp_path / "vae-demo.db")
    ran = 0
    for block in blocks(doc):
        if block.file:
            target = tmp_path / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")
        if not block.runs:
            continue
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block.script()],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (
            f"{doc.relative_to(ROOT)}:{block.line} exited {done.returncode}\n{block.text}\n"
            f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
        )
        ran += 1
    if doc.name == "scenarios.md":
        assert ran >= 6  # the worked example really ran


def _ignored(directory: str, names: list[str]) -> list[str]:
    return [n for n in names if n in ("node_modules", "__pycache__")]
