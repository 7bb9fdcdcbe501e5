"""Every ``--json`` writes exactly one JSON document to stdout, everything else to stderr.

Each command with a ``--json`` flag is run here on a real database (a
recorded run written through the store) and its stdout is parsed whole with
``json.loads``; progress bars and messages must not leak into it. ``vae run``,
``vae demo`` and ``vae import nemo`` need a live bridge, the bots or an
import fixture: their tests (test_run_cmd, test_demo, test_nemo_import) parse
their stdout the same way; the last test here makes sure no ``--json``
command is left out.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from tests.factories import write_run_sync
from tests.scorer_service.conftest import standard_sessions
from vae.cli.main import vae

ROOT = Path(__file__).resolve().parents[2]
NO_AUDIO = ["--only", "action_match", "--only", "db_state_match", "--only", "clean_exit"]
# compare: tests/cli/scoring/test_compare_cmd.py; import calls: tests/cli/runs/test_replay_cmd.py;
# label, labels import|list: tests/cli/labels/test_label_cmd.py;
# scores agree: tests/cli/labels/test_agree_cmd.py;
# review (serves until stopped): tests/scorer_service/review/helpers.py;
# gate: tests/cli/gate/test_gate_cmd.py; load (the whole stdout one document):
# tests/cli/load/test_load_soak.py.
COVERED_ELSEWHERE = {
    "run", "demo", "import nemo", "compare", "import calls", "label", "labels import",
    "labels list", "scores agree", "review", "gate", "redact", "load",
}  # fmt: skip
COVERED_HERE = {
    "runs list", "runs show", "rescore", "scores list", "scores show", "scores diff", "report",
    "export", "validate", "judge serve",
}  # fmt: skip


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "vae.db"
    scenarios, sessions = standard_sessions()
    write_run_sync(path, scenarios, sessions)
    return path


def one_document(args: list[str], code: int = 0) -> Any:
    result = CliRunner().invoke(vae, args, catch_exceptions=False)
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)  # the whole of stdout: one document, nothing else


def test_store_commands(db: Path, tmp_path: Path) -> None:
    d = ["--db", str(db), "--json"]
    assert one_document(["runs", "list", *d])[0]["run_id"].startswith("2024")
    shown = one_document(["runs", "show", "2024", *d])
    assert shown["sessions"] and all(s["session_id"] for s in shown["sessions"])
    first = one_document(["rescore", "--run", "2024", *NO_AUDIO, *d])
    only = ["--only", "clean_exit", "--allow-unscored"]  # the other gating signals: unscored
    second = one_document(["rescore", "--run", "2024", *only, *d])
    listed = one_document(["scores", "list", "2024", *d])
    assert {s["scoring_id"] for s in listed} == {first["scoring_id"], second["scoring_id"]}
    assert one_document(["scores", "show", first["scoring_id"], *d])["scoring_id"]
    assert "flips" in one_document(
        ["scores", "diff", first["scoring_id"], second["scoring_id"], *d]
    )
    report = one_document(["report", "2024", "-o", str(tmp_path / "r.html"), *d])
    assert Path(report["report"]).exists()
    exported = one_document(["export", "2024", "--format", "json", "-o", str(tmp_path), *d])
    assert exported["files"] and all(Path(f).exists() for f in exported["files"])


def test_validate(tmp_path: Path) -> None:
    suite = ROOT / "examples" / "suite"
    clean = one_document(["validate", str(suite), "--json"])
    assert clean["ok"] is True and len(clean["scenarios"]) == len(list(suite.glob("*.yaml")))
    broken = ROOT / "tests" / "recordings" / "scenarios" / "broken_scenarios"
    found = one_document(["validate", str(broken), "--json"], code=1)
    assert found["ok"] is False and len(found["problems"]) == 24
    assert {"file", "line", "column", "field", "problem"} == set(found["problems"][0])
    missing = one_document(["validate", str(tmp_path / "nope.yaml"), "--json"], code=2)
    assert missing["problems"][0]["problem"] == "does not exist"


def test_judge_serve_prints_one_document_then_serves(tmp_path: Path) -> None:
    """The stand-in judge announces itself with one JSON document and answers on loopback."""
    from openai import OpenAI

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vae.cli.main",
            "judge",
            "serve",
            "--address",
            "127.0.0.1:0",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        lines = []
        while not lines or lines[-1] != "}\n":  # the document's last line
            line = proc.stdout.readline()
            assert line, "judge serve exited early"
            lines.append(line)
        doc = json.loads("".join(lines))
        assert doc["stand_in"] is True and doc["model"] == "vae-offline-judge"
        assert doc["base_url"].startswith("http://127.0.0.1:")
        client = OpenAI(base_url=doc["base_url"], api_key="unused")
        reply = client.chat.completions.create(
            model=doc["model"],
            messages=[{"role": "user", "content": '<nl_assertions>\n1. The agent says "hi".\n'
                       "</nl_assertions>\n<agent_context>\nhi there\n</agent_context>"}],
        )  # fmt: skip
        verdict = json.loads(reply.choices[0].message.content or "")
        assert verdict["nl_assertion_verdicts"][0]["passed"] is True
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=10)
    assert out == "" and proc.returncode == 0  # nothing after the document
    assert "STAND-IN JUDGE" in err and "NOT an evaluator" in err


def test_every_json_command_is_covered() -> None:
    ctx = click.Context(vae)
    with_json = set()
    for name in vae.list_commands(ctx):
        command = vae.get_command(ctx, name)
        subs = (
            [(f"{name} {s}", command.get_command(ctx, s)) for s in command.list_commands(ctx)]
            if isinstance(command, click.Group)
            else [(name, command)]
        )
        for label, sub in subs:
            if sub is not None and any("--json" in p.opts for p in sub.params):
                with_json.add(label)
    assert with_json == COVERED_HERE | COVERED_ELSEWHERE
