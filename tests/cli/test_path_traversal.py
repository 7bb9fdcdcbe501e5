"""Every file-writing command keeps its files inside the directory it was given.

The database holds ids recorded before the identifier grammar existed (run
``../evil-x``, scenario ``../../up``), as an old file or a hostile one would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.factories import SessionSpec, conversation, scenario, write_run_sync
from tests.interop import nemo_fixture
from vae.cli.main import vae

EVIL_RUN = "../evil-x"


@pytest.fixture
def evil_db(tmp_path: Path) -> Path:
    db = tmp_path / "vae.db"
    write_run_sync(
        db,
        [scenario("../../up")],
        [SessionSpec("../../up", turns=conversation(1))],
        run_id=EVIL_RUN,
    )
    return db


def _files(root: Path) -> set[Path]:
    """Files under ``root``, leaving out the database's own WAL files."""
    return {p for p in root.rglob("*") if p.is_file() and not p.name.startswith("vae.db")}


@pytest.mark.parametrize("fmt", ["json", "wav"])
def test_export_stays_inside_its_output(evil_db: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "OUT" / "sub"
    before = _files(tmp_path)
    result = CliRunner().invoke(
        vae, ["export", EVIL_RUN, "--db", str(evil_db), "--format", fmt, "-o", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    written = {Path(p).resolve() for p in json.loads(result.stdout)["files"]}
    assert written
    for path in written:
        assert out.resolve() in path.parents, path
    assert _files(tmp_path) - before <= written


def test_report_default_name_stays_in_the_current_folder(
    evil_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    before = _files(tmp_path)
    result = CliRunner().invoke(vae, ["report", EVIL_RUN, "--db", str(evil_db)])
    assert result.exit_code == 0, result.output
    new = _files(tmp_path) - before
    assert new and all(p.parent == here for p in new), new


@pytest.mark.parametrize("run_id", ["../evil-x", "a b", "ünï", "x" * 300, ".hidden"])
def test_import_refuses_a_bad_run_id(tmp_path: Path, run_id: str) -> None:
    results = nemo_fixture.build(tmp_path / "nemo")
    db = tmp_path / "vae.db"
    result = CliRunner().invoke(
        vae, ["import", "nemo", str(results), "--run-id", run_id, "--db", str(db)]
    )
    assert result.exit_code == 2, result.output
    assert "--run-id" in result.output
    assert not db.exists()


def test_import_slugs_hostile_directory_names(tmp_path: Path) -> None:
    results = nemo_fixture.build(tmp_path / "nemo")
    first = next(p for p in sorted(results.iterdir()) if nemo_fixture_is_scenario(p))
    first.rename(first.with_name("a b ünï"))
    db = tmp_path / "vae.db"
    result = CliRunner().invoke(vae, ["import", "nemo", str(results), "--db", str(db), "--json"])
    assert result.exit_code in (0, 1), result.output
    from vae.recordings.identifiers import is_valid
    from vae.recordings.read.reader import RecordingReader

    with RecordingReader(db) as reader:
        (run_id,) = reader.run_ids()
        names = [s.scenario_name for s in reader.sessions(run_id)]
    assert names and all(is_valid(n) for n in names), names
    assert "a-b-n" in names


def nemo_fixture_is_scenario(path: Path) -> bool:
    from vae.recordings.importers.nemo.layout import is_scenario_dir

    return is_scenario_dir(path) and ".killed." not in path.name
