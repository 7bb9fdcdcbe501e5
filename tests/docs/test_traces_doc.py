"""docs/traces.md, "A pipecat agent": the commands shown send the pipecat example's own
traces to vae, and the report shows them.

The block is marked illustrative for the generic docs runner (it needs the
pipecat venv), so this test runs it as written, in a fresh folder holding a copy
of ``examples/`` and the venv of ``scripts/setup_pipecat_env.sh``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.docs.test_shell_blocks import ROOT, bin_dir, blocks, env  # noqa: F401
from tests.interop.conftest import require_pipecat_venv

DOC = ROOT / "docs" / "traces.md"


@pytest.mark.timeout(240)
def test_the_pipecat_commands_send_its_traces_to_vae(tmp_path: Path, env: dict[str, str]) -> None:  # noqa: F811
    venv = require_pipecat_venv().parents[1]
    (block,) = [b for b in blocks(DOC) if "examples/pipecat_bot/bot.py" in b.text
                and b.language == "bash"]  # fmt: skip
    shutil.copytree(ROOT / "examples", tmp_path / "examples",
                    ignore=shutil.ignore_patterns("node_modules", "__pycache__"))  # fmt: skip
    (tmp_path / ".pipecat-venv").symlink_to(venv)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.script()],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=200, check=False,
    )  # fmt: skip
    logs = "".join(f"\n--- {p.name}\n{p.read_text()[-2000:]}" for p in tmp_path.glob("*.log"))
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}{logs}"
    shown = subprocess.run(
        ["vae", "runs", "show", "traced", "--db", "traces.db", "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    spans = json.loads(shown.stdout)["agent_spans"]
    assert spans["matched_by"].get("traceparent", 0) >= 4  # conversation, stt, llm, tts
    html = (tmp_path / "traced.html").read_text(encoding="utf-8")
    assert "Agent spans per turn" in html and "trace context" in html
    assert ">llm · pipecat-example-bot</text>" in html
