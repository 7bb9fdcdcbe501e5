"""``vae report``: the file, --scoring/--compare, --json, and bad references."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cli.main import vae
from tests.scorer_service.report.runs import make_run, score


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(vae, ["report", *args])
    return result.exit_code, result.output


def test_report_writes_one_html_file_for_the_current_scoring(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run_id = make_run(db)
    scoring = score(db, run_id)
    out = tmp_path / "r" / "report.html"
    code, output = invoke(run_id[:10], "-o", str(out), "--db", str(db), "--json")
    assert code == 0, output
    doc = json.loads(output)
    assert doc == {
        "run_id": run_id,
        "scoring_id": scoring,
        "compare_scoring_id": None,
        "report": str(out),
        "sessions": 2,
    }
    html = out.read_text()
    assert "change_flight" in html and scoring in html


def test_compare_adds_the_diff_view(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run_id = make_run(db)
    first, second = score(db, run_id), score(db, run_id)
    out = tmp_path / "cmp.html"
    code, output = invoke(
        run_id, "--scoring", second, "--compare", first, "-o", str(out), "--db", str(db)
    )
    assert code == 0, output
    assert f"wrote {out}" in output
    assert 'class="diff"' in out.read_text()


def test_bad_references_are_usage_errors_and_write_nothing(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run_id = make_run(db)
    out = tmp_path / "x.html"
    assert invoke("1999", "-o", str(out), "--db", str(db))[0] == 2
    code, output = invoke(run_id, "--scoring", "nope", "-o", str(out), "--db", str(db))
    assert code == 2 and "no scoring matches 'nope'" in output
    assert invoke(run_id, "--db", str(tmp_path / "missing.db"), "-o", str(out))[0] == 2
    assert not out.exists()
