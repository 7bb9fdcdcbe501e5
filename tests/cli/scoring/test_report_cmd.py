"""``vae report``: the file, --scoring/--compare, --json, and bad references."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.scorer_service.report.runs import make_run, score
from vae.cli.main import vae


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
        "baseline_run_id": None,
        "regressions": None,
        "audio_dir": None,
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


def test_baseline_compares_two_runs_in_the_report(tmp_path: Path) -> None:
    from tests.scorer_service.report.runs import make_pair

    db = tmp_path / "vae.db"
    run_a, run_b = make_pair(db)
    out = tmp_path / "b.html"
    code, output = invoke(run_b, "--baseline", run_a[:10], "-o", str(out), "--db", str(db))
    assert code == 0, output
    assert f"against {run_a}: 1 regressions, 1 fixes, 0 unchanged, 0 unscored\n" in output
    html = out.read_text()
    assert 'class="baseline"' in html and "▼ regression" in html
    code, output = invoke(run_b, "--baseline", "1999", "-o", str(out), "--db", str(db))
    assert code == 2


def test_baseline_counts_name_the_unscored_scenarios(tmp_path: Path) -> None:
    """The counts line never drops what could not be compared (as vae demo prints it)."""
    from tests.factories import SessionSpec, scenario, write_run_sync
    from tests.scorer_service.report.runs import make_pair

    db = tmp_path / "vae.db"
    run_a, _ = make_pair(db)
    write_run_sync(db, [scenario("change_flight")], [SessionSpec("change_flight")], run_id="r3")
    out = tmp_path / "u.html"
    code, output = invoke("r3", "--baseline", run_a, "-o", str(out), "--db", str(db))
    assert code == 0, output
    line = f"against {run_a}: 0 regressions, 0 fixes, 0 unchanged, 1 unscored, 1 only in A\n"
    assert line in output


def test_audio_files_beside_the_html(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run_id = make_run(db)
    score(db, run_id)
    out = tmp_path / "big.html"
    code, output = invoke(run_id, "--audio", "files", "-o", str(out), "--db", str(db), "--json")
    assert code == 0, output
    doc = json.loads(output)
    assert doc["audio_dir"] == str(tmp_path / "big_audio")
    files = sorted(p.name for p in (tmp_path / "big_audio").iterdir())
    assert len(files) == 2 and all(f.endswith((".ogg", ".flac")) for f in files)
    html = out.read_text()
    assert "data:audio" not in html and f'src="big_audio/{files[0]}"' in html
