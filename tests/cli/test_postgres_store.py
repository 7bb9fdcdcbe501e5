"""Every command that takes ``--db`` on a ``postgresql://`` URL: bad databases and a real run.

The bad-database matrix mirrors tests/cli/test_bad_db_files.py for a server:
a malformed URL (exit 2), an unreachable server or a database that does not
exist (exit 1 within seconds), a database with a newer vae schema or another
program's tables (exit 1, left exactly as it was), a database with no vae
schema yet (readers: "no vae database", exit 2; importers create the schema).
No traceback, ever.

End to end: ``vae demo`` records a small suite through a real bridge with the
reference bots into PostgreSQL and scores it; the same suite on SQLite gives
the same verdicts; then rescore, runs, scores, report, export, compare and
both importers work on the URL.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.factories import SessionSpec, conversation, scenario, write_run_sync
from tests.helpers import closed_port
from tests.interop import nemo_fixture
from tests.pg import PgServer
from tests.recordings.calls_fixture import write_sidecars, write_stereo
from vae.cli.main import vae
from vae.recordings.backends import pg
from vae.recordings.backends.locator import locate

ROOT = Path(__file__).resolve().parents[2]
RUN = "2024-06-01T10-00-00"
SUITE = ROOT / "examples" / "suite"


def digest(url: str) -> str:
    """Every table of the database and every row in it."""
    conn = pg.connect(locate(url))
    h = hashlib.sha256()
    try:
        tables = sorted(r[0] for r in conn.raw.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = current_schema()"))  # fmt: skip
        for table in tables:
            h.update(table.encode())
            for row in conn.raw.execute(f'SELECT * FROM "{table}" ORDER BY 1').fetchall():
                h.update(repr(row).encode())
    finally:
        conn.close()
    return h.hexdigest()


def make_case(kind: str, server: PgServer) -> str:
    if kind == "malformed":
        return "postgresql://vae@127.0.0.1:notaport/vae"
    if kind == "unreachable":
        with closed_port() as port:  # refused: nothing listens there
            return f"postgresql://vae@127.0.0.1:{port}/vae"
    if kind == "no-such-database":
        return server.url("no_such_database")
    url = server.fresh_database()
    if kind == "empty":
        return url
    if kind == "foreign":
        conn = pg.connect(locate(url))
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('not vae')")
        conn.close()
        return url
    write_run_sync(url, [scenario("s1")], [SessionSpec("s1", turns=conversation(2))], run_id=RUN)
    if kind == "newer":
        conn = pg.connect(locate(url))
        conn.execute(
            "INSERT INTO schema_migrations (id, name, applied_ns) VALUES (999, '0999_future', 0)"
        )
        conn.close()
    return url


KINDS = ["malformed", "unreachable", "no-such-database", "newer", "foreign", "empty"]
COMMANDS: dict[str, list[str]] = {
    "runs-list": ["runs", "list"],
    "runs-show": ["runs", "show", RUN],
    "scores-list": ["scores", "list", RUN],
    "report": ["report", RUN, "-o", "{out}/r.html"],
    "export": ["export", RUN, "--format", "json", "-o", "{out}/x"],
    "compare": ["compare", RUN, RUN],
    "rescore": ["rescore", "--run", RUN, "--no-judge"],
    "import-nemo": ["import", "nemo", "{nemo}"],
    "import-calls": ["import", "calls", "{calls}"],
}
#: A database with no vae schema yet: importing creates it.
CREATES = {"import-nemo", "import-calls"}


def _args(template: list[str], url: str, tmp: Path) -> list[str]:
    nemo = tmp / "nemo"
    if "{nemo}" in template:
        nemo_fixture.build(nemo)
        nemo = next(p for p in nemo.iterdir() if p.is_dir())
    calls = tmp / "calls"
    if "{calls}" in template:
        calls.mkdir()
        write_stereo(calls / "c1.wav")
        write_sidecars(calls, "c1")
    fill = {"{out}": str(tmp / "out"), "{nemo}": str(nemo), "{calls}": str(calls)}
    args = []
    for arg in template:
        for key, value in fill.items():
            arg = arg.replace(key, value)
        args.append(arg)
    return [*args, "--db", url]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", COMMANDS)
def test_bad_postgres_database(
    command: str, kind: str, pg_server: PgServer, tmp_path: Path
) -> None:
    url = make_case(kind, pg_server)
    before = digest(url) if kind in ("newer", "foreign", "empty") else None
    t0 = time.monotonic()
    result = CliRunner().invoke(vae, _args(COMMANDS[command], url, tmp_path))
    output = result.output + (str(result.exception) if result.exception else "")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        pytest.fail(f"uncaught {type(result.exception).__name__}: {result.exception}")
    assert "Traceback" not in output, output
    assert time.monotonic() - t0 < 20
    if kind == "empty" and command in CREATES:
        assert result.exit_code == 0, output
        assert digest(url) != before  # a schema and a run
        return
    expected = {"malformed": 2, "empty": 2}.get(kind, 1)
    assert result.exit_code == expected, output
    assert "error" in output.lower(), output
    if before is not None:
        assert digest(url) == before, "the database was changed"
    reason = {
        "malformed": "not a valid PostgreSQL URL",
        "unreachable": "cannot use the PostgreSQL database",
        "no-such-database": 'database "no_such_database" does not exist',
        "newer": "newer",
        "foreign": "another program",
        "empty": "no vae database",
    }[kind]
    assert reason in output, output
    assert "vae@127.0.0.1" in output or kind == "newer"


def _serve(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vae.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )


@pytest.mark.parametrize("kind", ["malformed", "unreachable", "newer", "foreign"])
@pytest.mark.parametrize("service", ["bridge", "scorer"])
def test_serve_refuses_a_bad_postgres_database_at_start(
    service: str, kind: str, pg_server: PgServer
) -> None:
    url = make_case(kind, pg_server)
    before = digest(url) if kind in ("newer", "foreign") else None
    got = _serve([service, "serve", "--db", url, "--address", "127.0.0.1:0"])
    assert got.returncode == (2 if kind == "malformed" else 1), got.stderr
    assert "Traceback" not in got.stderr, got.stderr
    assert "rror" in got.stderr
    if before is not None:
        assert digest(url) == before


def _vae(*args: str) -> Any:
    result = CliRunner().invoke(vae, list(args))
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result


def _demo(db: str, folder: Path, out: Path) -> dict[str, Any]:
    result = _vae("demo", "--db", db, "--suite", str(folder), "--concurrency", "4",
                  "-o", str(out), "--json")  # fmt: skip
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def verdicts(doc: dict[str, Any]) -> dict[str, str]:
    return {s["scenario"]: s["verdict"] for s in doc["sessions"]}


@pytest.mark.timeout(300)
def test_record_rescore_report_export_on_postgres(
    pg_url: str, tmp_path: Path, pg_server: PgServer
) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    for name in ("restaurant_book_table", "airline_wrong_date", "restaurant_hang_up"):
        shutil.copy(SUITE / f"{name}.yaml", folder)
    # Recorded through a real bridge with the reference bots, scored, reported.
    first = _demo(pg_url, folder, tmp_path / "demo.html")
    assert first["database"] == pg_url
    assert verdicts(first) == {
        "restaurant_book_table": "passed",
        "airline_wrong_date": "failed",
        "restaurant_hang_up": "failed",
    }
    # The same suite on SQLite means the same.
    assert verdicts(_demo(str(tmp_path / "lite.db"), folder, tmp_path / "lite.html")) == verdicts(
        first
    )
    second = _demo(pg_url, folder, tmp_path / "demo2.html")
    run_a, run_b = first["run_id"], second["run_id"]

    runs = json.loads(_vae("runs", "list", "--db", pg_url, "--json").stdout)
    assert {r["run_id"] for r in runs} == {run_a, run_b}
    shown = json.loads(_vae("runs", "show", run_a, "--db", pg_url, "--json").stdout)
    assert len(shown["sessions"]) == 3
    args = ["rescore", "--run", run_a, "--db", pg_url, "--no-judge", "--allow-unscored", "--json"]
    rescored = json.loads(_vae(*args).stdout)
    action = {
        o["scenario_name"]: s["verdict"]
        for o in rescored["sessions"]
        for s in o["scores"]
        if s["signal"] == "ACTION_MATCH"
    }
    assert action == {
        "restaurant_book_table": "passed",
        "airline_wrong_date": "failed",
        "restaurant_hang_up": "passed",
    }
    scorings = json.loads(_vae("scores", "list", run_a, "--db", pg_url, "--json").stdout)
    assert len(scorings) == 2  # the demo's and the rescore's
    _vae("report", run_a, "--db", pg_url, "-o", str(tmp_path / "report.html"))
    assert "restaurant_book_table" in (tmp_path / "report.html").read_text()
    _vae("export", run_a, "--db", pg_url, "--format", "wav", "-o", str(tmp_path / "exp"))
    wavs = sorted(p.name for p in (tmp_path / "exp" / run_a).glob("*.wav"))
    assert len(wavs) == 9 and "restaurant_book_table.1.stereo.wav" in wavs
    cmp = json.loads(_vae("compare", run_a, run_b, "--db", pg_url, "--json").stdout)
    assert cmp["run_a"] == run_a and cmp["run_b"] == run_b


def test_both_importers_write_to_postgres(pg_url: str, tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    calls.mkdir()
    write_stereo(calls / "c1.wav")
    write_sidecars(calls, "c1")
    got = json.loads(_vae("import", "calls", str(calls), "--db", pg_url, "--run-id", "calls",
                          "--json").stdout)  # fmt: skip
    assert got["run_id"] == "calls"
    nemo_fixture.build(tmp_path / "nemo")
    results = next(p for p in (tmp_path / "nemo").iterdir() if p.is_dir())
    _vae("import", "nemo", str(results), "--db", pg_url, "--run-id", "nemo")
    # VAE_DB names the store as --db does.
    listed = CliRunner().invoke(vae, ["runs", "list", "--json"], env={"VAE_DB": pg_url})
    assert listed.exit_code == 0, listed.output
    assert {r["run_id"] for r in json.loads(listed.stdout)} == {"calls", "nemo"}
    shown: Callable[[str], Any] = lambda run: json.loads(  # noqa: E731
        _vae("runs", "show", run, "--db", pg_url, "--json").stdout
    )
    assert shown("calls")["sessions"] and shown("nemo")["sessions"]
