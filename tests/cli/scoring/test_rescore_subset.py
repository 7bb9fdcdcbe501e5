"""``vae rescore --session/--only`` keeps the run's complete scoring current unless
``--make-current`` (what ``vae scores list`` marks and ``vae report`` shows)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from tests.factories import write_run_sync
from tests.scorer_service.conftest import standard_sessions
from vae.cli.main import vae
from vae.recordings.read.reader import RecordingReader


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(vae, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_a_session_rescore_leaves_the_complete_scoring_current(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    scenarios, sessions = standard_sessions()
    info = write_run_sync(db, scenarios, sessions)
    d = ["--db", str(db), "--no-judge", "--allow-unscored", "--json"]
    code, out, _ = invoke("rescore", "--run", "2024", *d)
    assert code == 0
    full = json.loads(out)["scoring_id"]
    sid = info.session_ids["book_wrong"]
    code, out, err = invoke("rescore", "--run", "2024", "--session", sid, *d)
    assert code == 0 and "the run keeps its complete scoring" in err
    subset = json.loads(out)["scoring_id"]
    code, out, _ = invoke("scores", "list", "2024", "--db", str(db))
    assert re.search(rf"^\*\s+{re.escape(full)}\s", out, re.M)
    assert re.search(rf"^\s+{re.escape(subset)}\s", out, re.M)
    code, out, _ = invoke("report", "2024", "--db", str(db), "-o", str(tmp_path / "r.html"))
    assert code == 0 and f"scoring {full}" in out
    code, _, err = invoke("rescore", "--run", "2024", "--session", sid, "--overwrite", *d)
    assert code == 2 and "--make-current" in err
    with RecordingReader(db) as reader:
        assert len(reader.scorings()) == 2, "the refused overwrite wrote nothing"
    code, out, err = invoke("rescore", "--run", "2024", "--session", sid, "--make-current", *d)
    assert code == 0 and "is now the run's current one" in err
    made = json.loads(out)["scoring_id"]
    code, out, _ = invoke("scores", "list", "2024", "--db", str(db))
    assert re.search(rf"^\*\s+{re.escape(made)}\s", out, re.M)
