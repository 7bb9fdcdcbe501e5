"""``vae runs show`` prints the run's options and every session id (what --session takes)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from cli.main import vae
from recordings.reader import RecordingReader
from tests.factories import write_run_sync
from tests.scorer_service.conftest import standard_sessions


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
