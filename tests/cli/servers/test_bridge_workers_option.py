"""``vae bridge serve --workers``: at least 1, or ``auto``; anything else is a usage error.

A bad value (flag or ``VAE_WORKERS``) exits 2 naming the option before
anything starts: no database file, no process, no port.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from vae.cli.main import vae
from vae.cli.servers.bridge_cmd import cores, parse_workers


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("0", "0 is below 1"),
        ("-2", "-2 is below 1"),
        ("two", "'two' is neither a number nor 'auto'"),
        ("1.5", "'1.5' is neither a number nor 'auto'"),
        ("", "'' is neither a number nor 'auto'"),
    ],
)
def test_a_bad_workers_value_is_a_usage_error_and_starts_nothing(
    tmp_path: Path, value: str, why: str
) -> None:
    db = tmp_path / "vae.db"
    args = ["bridge", "serve", "--db", str(db), "--address", "127.0.0.1:0"]
    ways: list[tuple[list[str], dict[str, str]]] = [(["--workers", value], {})]
    if value:  # an empty VAE_WORKERS is unset for click: the default applies
        ways.append(([], {"VAE_WORKERS": value}))
    for given, env in ways:
        result = CliRunner().invoke(vae, [*args, *given], env=env)
        assert result.exit_code == 2, result.output
        assert "--workers" in result.stderr and why in result.stderr, result.stderr
        assert "Traceback" not in result.output
        assert not db.exists()


def test_auto_means_one_bridge_process_per_core() -> None:
    assert parse_workers(None, None, "auto") == cores() >= 1  # type: ignore[arg-type]
    assert parse_workers(None, None, " AUTO ") == cores()  # type: ignore[arg-type]
    assert parse_workers(None, None, "3") == 3  # type: ignore[arg-type]


def test_the_help_explains_workers() -> None:
    result = CliRunner().invoke(vae, ["bridge", "serve", "--help"])
    assert result.exit_code == 0
    assert "--workers N|auto" in result.stdout and "VAE_WORKERS" in result.stdout
    assert "vae bridge serve --db vae.db --workers auto" in result.stdout
