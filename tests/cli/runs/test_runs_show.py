"""``vae runs show`` prints the run's options and every session id (what --session takes)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner

from tests.factories import write_run_sync
from tests.scorer_service.conftest import standard_sessions
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
    assert [line.split()[0] for line in lines[header + 1 :]] == [s.session_id for s in sessions]


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
