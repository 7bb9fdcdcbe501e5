"""Installing vae does not break a user's project.

A wheel built from this checkout is installed into a fresh virtual
environment (its dependencies from the package index, as a user's ``pip
install`` takes them), then used from a project that has its own ``cli/``,
``bots/`` and ``recordings/`` packages — the common names vae's folders carry
in the repository. The wheel puts only ``vae`` at the top of site-packages
(the folders are installed as ``vae.cli``, ``vae.recordings``, …), so the
user's packages are the ones imported, and both the user's own tests and
``pytest --vae-suite`` (the plugin is ``vae.cli.ci.pytest_plugin``) run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import ROOT

USER_TESTS = """
import bots
import cli
import recordings


def test_my_packages_are_mine():
    assert cli.WHOSE == bots.WHOSE == recordings.WHOSE == "the user's"


def test_vae_is_importable_beside_them():
    import vae.cli.main
    import vae.recordings.models

    assert vae.recordings.models.Side.USER.value == "user"
    assert vae.cli.main.vae.name == "vae"
"""


def _run(*args: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "VAE_", "PYTHON"))}
    return subprocess.run(
        list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _checkout(into: Path) -> Path:
    """The tracked files as a clone has them (links kept), so no build left-over is packed."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    for name in filter(None, listed.stdout.decode().split("\0")):
        source, target = ROOT / name, into / name
        if source.is_symlink() or source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
    return into


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = _checkout(tmp_path_factory.mktemp("checkout"))
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                 "-q", "-w", str(out), str(source), cwd=out, timeout=300)  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    (path,) = out.glob("vae-*.whl")
    return path


def test_the_wheel_installs_only_vae_at_the_top(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
        entry_points = next(n for n in names if n.endswith("entry_points.txt"))
        points = archive.read(entry_points).decode()
    assert top == {"vae"}
    for package in ("cli", "bots", "recordings", "bridge_service", "scorer_service"):
        assert any(n.startswith(f"vae/{package}/") and n.endswith(".py") for n in names), package
    assert "vae = vae.cli.ci.pytest_plugin" in points
    assert "vae = vae.cli.main:main" in points


@pytest.mark.timeout(900)
def test_a_project_with_its_own_cli_bots_and_recordings(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    made = _run(sys.executable, "-m", "venv", str(venv), cwd=tmp_path, timeout=120)
    assert made.returncode == 0, made.stderr
    python = str(venv / "bin" / "python")
    installed = _run(python, "-m", "pip", "install", "-q", str(wheel), "pytest",
                     cwd=tmp_path, timeout=600)  # fmt: skip
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]

    project = tmp_path / "project"
    for package in ("cli", "bots", "recordings"):
        (project / package).mkdir(parents=True)
        (project / package / "__init__.py").write_text('WHOSE = "the user\'s"\n')
    (project / "tests").mkdir()
    (project / "tests" / "test_mine.py").write_text(USER_TESTS)
    (project / "suite").mkdir()
    shutil.copy(ROOT / "examples" / "suite" / "restaurant_book_table.yaml", project / "suite")

    mine = _run(python, "-m", "pytest", "-q", "tests", cwd=project, timeout=300)
    assert mine.returncode == 0, mine.stdout[-3000:] + mine.stderr[-3000:]
    assert "2 passed" in mine.stdout

    suite = _run(python, "-m", "pytest", "-q", "--vae-suite", "suite", "--vae-tts", "buzz",
                 "--vae-db", str(project / "vae.db"), cwd=project, timeout=600)  # fmt: skip
    assert suite.returncode == 0, suite.stdout[-3000:] + suite.stderr[-3000:]
    assert "1 passed" in suite.stdout, suite.stdout[-3000:]

    cli = _run(str(venv / "bin" / "vae"), "runs", "list", "--db", str(project / "vae.db"),
               cwd=project, timeout=120)  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert "1" in cli.stdout
