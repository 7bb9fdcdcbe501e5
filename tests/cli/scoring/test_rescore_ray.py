"""``vae rescore --ray``: the same output as a local rescore, and clear errors for bad input.

The rescores run against the test process's local Ray instance
(``tests/ray_instance.py``): in this process through click's runner, and in
a subprocess that connects to it by address, as a user's ``vae`` would.
Bad addresses and a missing ``ray`` package are tried in fresh subprocesses
(this process may already be connected to Ray).
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import shutil
import struct
import subprocess
import sys
import termios
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.factories import write_run_sync
from tests.helpers import closed_port
from tests.ray_instance import RayInstance
from tests.scorer_service.conftest import standard_sessions
from vae.cli.main import vae
from vae.recordings.read.reader import RecordingReader

pytestmark = pytest.mark.xdist_group("ray")

ROOT = Path(__file__).resolve().parents[3]
SCORE = ["rescore", "--run", "2024", "--no-judge", "--allow-unscored"]
#: What differs between two scorings of one run: which scoring, and when.
IDENTITY = ("scoring_id", "created_ns")
SKIP_CACHE = shutil.ignore_patterns("__pycache__")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "vae.db"
    write_run_sync(path, *standard_sessions())
    return path


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(vae, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _argv(args: tuple[str, ...], prelude: str = "") -> list[str]:
    return [sys.executable, "-c", f"{prelude}\nfrom vae.cli.main import main\nmain()", *args]


def env() -> dict[str, str]:
    # Read at call time: the test's Ray instance sets RAY_AUTH_MODE=token in this process,
    # and a process connecting by address must say so too (as Ray asks of any client).
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def cli(*args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    """``vae ARGS`` in a fresh interpreter (``prelude`` runs first, e.g. to hide a package)."""
    return subprocess.run(
        _argv(args, prelude),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env(),
        timeout=180,
        check=False,
    )


def cli_on_a_terminal(*args: str) -> tuple[int, str, str]:
    """``vae ARGS`` with stderr on a pseudo-terminal, as a user sees it (the bar shows)."""
    master, slave = pty.openpty()
    # 24 rows of 120 columns: a new pseudo-terminal is 0 wide, and the bar fits in that.
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    with subprocess.Popen(
        _argv(args), stdout=subprocess.PIPE, stderr=slave, cwd=ROOT, env=env(), text=True
    ) as proc:
        os.close(slave)
        out, _ = proc.communicate(timeout=180)
    reader.join(10)
    os.close(master)
    return proc.returncode, out, b"".join(chunks).decode(errors="replace")


def scorings(db: Path) -> list[Any]:
    with RecordingReader(db) as reader:
        return reader.scorings()


def without_identity(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in IDENTITY}


def test_json_on_ray_equals_the_local_json(ray_instance: RayInstance, db: Path) -> None:
    code, local, _ = invoke(*SCORE, "--db", str(db), "--json")
    assert code == 0
    env = {"VAE_RAY": ray_instance.address}  # the option's environment variable
    code, on_ray, err = invoke(*SCORE, "--db", str(db), "--json", env=env)
    assert code == 0, err
    a, b = json.loads(local), json.loads(on_ray)  # stdout is one JSON document
    assert a["scoring_id"] != b["scoring_id"]
    assert without_identity(a) == without_identity(b)
    assert [s.status for s in scorings(db)] == ["complete", "complete"]


def test_a_user_process_connects_by_address_and_shows_progress(
    ray_instance: RayInstance, db: Path
) -> None:
    local = cli(*SCORE, "--db", str(db))
    code, out, err = cli_on_a_terminal(*SCORE, "--db", str(db), "--ray", ray_instance.address)
    assert code == 0, err
    assert "rescoring: 100%" in err and "3/3" in err  # the progress bar
    assert "Traceback" not in err and "scoring 3 session(s) on Ray" in err
    # The printed summary is the local one, scoring id aside.
    ours = [line for line in out.splitlines() if "Scoring" not in line]
    assert ours == [line for line in local.stdout.splitlines() if "Scoring" not in line]
    assert "Success rate:      33.3%" in out


def test_without_the_ray_package_the_error_names_the_extra(db: Path) -> None:
    done = cli(
        *SCORE, "--db", str(db), "--ray", "auto", prelude="import sys; sys.modules['ray'] = None"
    )
    assert done.returncode == 1
    assert "pip install 'vae[ray]'" in done.stderr and "Traceback" not in done.stderr
    assert scorings(db) == []


class _NotRay(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_bad_addresses_are_clear_errors_and_write_nothing(db: Path) -> None:
    done = cli(*SCORE, "--db", str(db), "--ray", "not an address")
    assert done.returncode == 2 and "expected auto, local, HOST:PORT" in done.stderr
    with closed_port() as port:
        started = time.monotonic()
        done = cli(*SCORE, "--db", str(db), "--ray", f"127.0.0.1:{port}")
    assert done.returncode == 1 and "cannot reach Ray at 127.0.0.1:" in done.stderr
    assert time.monotonic() - started < 60  # Ray alone would retry for ever
    done = cli(*SCORE, "--db", str(db), "--ray", "no-such-host.invalid:6379")
    assert done.returncode == 1 and "unknown host 'no-such-host.invalid'" in done.stderr
    with ThreadingHTTPServer(("127.0.0.1", 0), _NotRay) as http:
        port = http.server_address[1]
        threading.Thread(target=http.serve_forever, daemon=True).start()
        try:
            done = cli(*SCORE, "--db", str(db), "--ray", f"127.0.0.1:{port}")
        finally:
            http.shutdown()
    assert done.returncode == 1 and "answers but is not a Ray cluster" in done.stderr
    assert "Traceback" not in done.stderr
    assert scorings(db) == []  # connected before the scoring is created: nothing half-written


def test_ray_with_a_scorer_service_is_a_usage_error(db: Path) -> None:
    code, _, err = invoke(*SCORE, "--db", str(db), "--ray", "auto", "--scorer", "127.0.0.1:1")
    assert code == 2 and "vae scorer serve --ray" in err
    assert scorings(db) == []


def test_a_scorer_service_refuses_to_start_on_a_bad_ray_address(db: Path) -> None:
    with closed_port() as port:
        done = cli("scorer", "serve", "--db", str(db), "--address", "127.0.0.1:0",
                   "--ray", f"127.0.0.1:{port}")  # fmt: skip
    assert done.returncode == 1 and "cannot reach Ray at 127.0.0.1:" in done.stderr
    assert "scorer serving" not in done.stderr and "Traceback" not in done.stderr
    done = cli("scorer", "serve", "--db", str(db), "--ray", "6379")
    assert done.returncode == 2 and "expected auto, local, HOST:PORT" in done.stderr


def test_workers_run_the_callers_code_not_what_is_installed(
    ray_instance: RayInstance, db: Path, tmp_path: Path
) -> None:
    # The caller imports a copy of the scoring packages that differs from every installed
    # one (a comment added); a worker importing anything else would refuse the task.
    code = tmp_path / "code"
    for package in ("recordings", "scorer_service"):
        shutil.copytree(
            ROOT / package, code / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    marker = code / "scorer_service" / "__init__.py"
    marker.write_text(marker.read_text() + "# a caller's local change\n")
    elsewhere = tmp_path / "elsewhere"  # Ray puts the caller's folder first on workers' path
    elsewhere.mkdir()
    prelude = f"import sys; sys.path[:0] = [{str(code)!r}, {str(ROOT)!r}]"
    done = subprocess.run(
        _argv((*SCORE, "--db", str(db), "--ray", ray_instance.address, "--json"), prelude),
        capture_output=True, text=True, cwd=elsewhere, timeout=180, check=False,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "complete"
