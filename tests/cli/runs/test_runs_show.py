"""``vae runs show`` prints the run's options and every session id (what --session takes)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner

from tests.factories import write_run_sync
from tests.scorer_service.conftest import standard_sessions
from tests.scorer_service.gate.runs import built_to_fail
from vae.cli.main import vae
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.writer import open_writer


def test_runs_show_prints_options_and_session_ids(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    options = {"concurrency": 2, "end_policy": "tool-only", "tags": ["nightly"]}
    write_run_sync(db, *standard_sessions(), options=options)
    result = CliRunner().invoke(vae, ["runs", "show", "2024", "--db", str(db)])
    assert result.exit_code == 0, result.output
    with RecordingReader(db) as reader:
        run = reader.list_runs("", 0)[0]
        sessions = reader.sessions(run.run_id)
    assert run.options == options
    assert "options:" in result.stdout
    assert '  concurrency: 2\n  end_policy: "tool-only"\n  tags: ["nightly"]\n' in result.stdout
    lines = result.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("session_id"))
    end = next(i for i, line in enumerate(lines) if line.startswith("gate "))  # after the table
    assert [line.split()[0] for line in lines[header + 1 : end]] == [s.session_id for s in sessions]
    # Not scored: the gate cannot decide, and no session has an outcome yet.
    assert lines[end].endswith("no scoring): could not decide (exit 3)")
    assert "  undecided scored: run 2024-06-01T10-00-00 has no scoring" in result.stdout


def test_runs_show_gives_each_session_its_outcome_and_the_gate(tmp_path: Path) -> None:
    """The outcome column and the closing gate lines are what `vae gate RUN` decides."""
    db = tmp_path / "vae.db"
    run = built_to_fail(db, "mixed", tagged=("book_ok", "book_wrong"))  # db_case: unmarked
    result = CliRunner().invoke(vae, ["runs", "show", run, "--db", str(db)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("session_id"))
    assert "outcome" in header.split()
    rows = {line.split()[1]: line for line in lines if line.startswith(f"{run}/")}
    assert "unexpectedly passed" in rows["book_ok"]
    assert "expected failure" in rows["book_wrong"] and " failed " in rows["db_case"]
    gated = CliRunner().invoke(vae, ["gate", run, "--db", str(db)])
    assert gated.exit_code == 1
    assert f"decides, scoring {run}." in result.stdout
    assert "failed: the agent missed the gate (exit 1)" in result.stdout
    assert "  failed    scenarios: 1 scenario(s) failed their gating signals: db_case" in (
        result.stdout
    )
    assert "  failed    expect-fail: 1 scenario(s) built to fail unexpectedly passed: book_ok" in (
        result.stdout
    )
    shown = CliRunner().invoke(vae, ["runs", "show", run, "--db", str(db), "--json"])
    doc = json.loads(shown.stdout)
    assert {s["scenario"]: (s["expect_fail"], s["outcome"]) for s in doc["sessions"]} == {
        "book_ok": (True, "xpassed"), "book_wrong": (True, "xfailed"),
        "db_case": (False, "failed"),
    }  # fmt: skip
    gate = doc["gate"]
    assert (gate["status"], gate["exit_code"], gate["rule"]) == ("failed", 1, "scenarios")
    assert (gate["counts"]["xfailed"], gate["counts"]["xpassed"]) == (1, 1)
    assert [c["name"] for c in gate["checks"]][-2:] == ["scenarios", "expect-fail"]


def test_runs_show_names_the_bridge_process_of_each_attempt(tmp_path: Path) -> None:
    """Text: a `bridge` column; --json: a `bridge` object per session, null when unknown."""
    db = tmp_path / "vae.db"
    write_run_sync(db, *standard_sessions())
    with RecordingReader(db) as reader:
        run_id = reader.list_runs("", 0)[0].run_id
        first, *rest = reader.sessions(run_id)
    at_worker = {"host": "h1", "pid": 4242, "address": "127.0.0.1:40001", "worker": 2,
                 "front_door": "127.0.0.1:50051"}  # fmt: skip

    async def record() -> None:
        async with open_writer(db) as writer:
            await writer.put_session_bridge(first.session_id, at_worker)

    asyncio.run(record())
    result = CliRunner().invoke(vae, ["runs", "show", run_id, "--db", str(db)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("session_id"))
    assert header.split()[-1] == "bridge"
    row = next(line for line in lines if line.startswith(first.session_id))
    assert row.rstrip().endswith("worker 2 pid 4242")
    shown = CliRunner().invoke(vae, ["runs", "show", run_id, "--db", str(db), "--json"])
    by_id = {s["session_id"]: s["bridge"] for s in json.loads(shown.stdout)["sessions"]}
    assert by_id[first.session_id] == at_worker
    assert all(by_id[s.session_id] is None for s in rest)
