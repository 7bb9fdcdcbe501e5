"""At the default log level a rescore with a judge shows no HTTP client lines; debug shows them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.factories import write_run_sync
from tests.scorer_service.conftest import standard_sessions
from vae.bots.stand_in.offline_judge import MODEL, offline_judge_server

ROOT = Path(__file__).resolve().parents[2]


def _rescore(db: Path, base_url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vae.cli.main", "rescore", "--run", "2024", "--db", str(db),
         "--only", "judge", "--allow-unscored",  # the other gating signals are not scored
         "--judge-base-url", base_url, "--judge-model", MODEL, *extra],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )  # fmt: skip


def test_http_request_lines_only_at_debug(tmp_path: Path) -> None:
    quiet_db, loud_db = tmp_path / "quiet.db", tmp_path / "loud.db"
    for db in (quiet_db, loud_db):  # two databases: a judge cache would skip the calls
        write_run_sync(db, *standard_sessions())
    with offline_judge_server() as judge:
        quiet = _rescore(quiet_db, judge.base_url)
        called = len(judge.requests)
        loud = _rescore(loud_db, judge.base_url, "--log-level", "debug")
        assert 0 < called < len(judge.requests)  # the judge really was called both times
    assert quiet.returncode == 0, quiet.stderr
    assert "HTTP Request" not in quiet.stderr and "Judge: vae-offline-judge" in quiet.stdout
    assert loud.returncode == 0 and "HTTP Request: POST" in loud.stderr
