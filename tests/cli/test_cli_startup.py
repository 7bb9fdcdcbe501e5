"""The CLI loads lazily: help never imports the heavy libraries; the command table resolves.

Timing is measured by ``benchmarks/cli_startup.py``, never asserted here; what
is asserted is the cause of slowness: which modules ``--help`` imports.
"""

from __future__ import annotations

import logging
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from vae.cli.common import setup_logging
from vae.cli.main import COMMANDS, vae

HEAVY = (
    "grpc", "openai", "numpy", "httpx", "aiosqlite", "soundfile", "google.protobuf", "tqdm",
    "psycopg", "ray",
)  # fmt: skip
LOGGING_COMMANDS = [
    ["run"], ["rescore"], ["bot"], ["bridge", "serve"], ["scorer", "serve"], ["demo"],
    ["import", "nemo"], ["judge", "serve"], ["review"], ["load"],
]  # fmt: skip

PROBE = """
import sys
from vae.cli.main import vae
try:
    vae(sys.argv[1:], standalone_mode=False)
finally:
    heavy = [m for m in {heavy!r} if m in sys.modules]
    print("HEAVY=" + ",".join(heavy), file=sys.stderr)
"""


def _leaf_commands() -> list[list[str]]:
    ctx = click.Context(vae)
    out: list[list[str]] = []
    for name in vae.list_commands(ctx):
        command = vae.get_command(ctx, name)
        if isinstance(command, click.Group):
            out.extend([name, sub] for sub in command.list_commands(ctx))
        else:
            out.append([name])
    return out


def test_every_table_entry_is_a_command_of_that_name() -> None:
    ctx = click.Context(vae)
    for name in COMMANDS:
        command = vae.get_command(ctx, name)
        assert isinstance(command, click.Command) and command.name == name


@pytest.mark.parametrize("argv", [[], *_leaf_commands()], ids=lambda a: " ".join(a) or "vae")
def test_help_imports_no_heavy_library(argv: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv, "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Usage:" in done.stdout
    assert "HEAVY=\n" in done.stderr, done.stderr


@pytest.mark.parametrize("argv", _leaf_commands(), ids=" ".join)
def test_main_commands_show_examples(argv: list[str]) -> None:
    ctx = click.Context(vae)
    command: click.Command | None = vae
    for part in argv:
        assert isinstance(command, click.Group)
        command = command.get_command(ctx, part)
    assert command is not None and "Examples:" in (command.help or "")


@pytest.mark.parametrize("argv", LOGGING_COMMANDS, ids=" ".join)
def test_commands_that_log_take_log_level(argv: list[str]) -> None:
    ctx = click.Context(vae)
    command: click.Command | None = vae
    for part in argv:
        assert isinstance(command, click.Group)
        command = command.get_command(ctx, part)
    assert command is not None
    assert "--log-level" in {opt for p in command.params for opt in p.opts}


def test_third_party_logs_are_quiet_unless_debugging() -> None:
    root, own = logging.getLogger(), logging.getLogger("vae")
    before = root.level, own.level
    try:
        setup_logging("info")
        for name in ("httpx", "httpx2", "openai", "grpc", "anything.else"):
            assert not logging.getLogger(name).isEnabledFor(logging.INFO), name
        assert logging.getLogger("vae.scorer.judge").isEnabledFor(logging.INFO)
        setup_logging("warning")
        assert not logging.getLogger("vae.bridge").isEnabledFor(logging.INFO)
        setup_logging("debug")
        assert logging.getLogger("httpx2").isEnabledFor(logging.DEBUG)
    finally:
        root.setLevel(before[0])
        own.setLevel(before[1])


def test_defaults_repeated_for_fast_help_match_their_source() -> None:
    from vae.bridge_service.config import BridgeSettings
    from vae.cli.scoring import rescore_cmd
    from vae.cli.servers import bridge_cmd
    from vae.scorer_service.config import END_POLICIES

    assert BridgeSettings.wait_timeout_s == bridge_cmd.WAIT_TIMEOUT_S
    assert BridgeSettings.final_state_timeout_s == bridge_cmd.FINAL_STATE_TIMEOUT_S
    assert rescore_cmd.END_POLICIES == END_POLICIES


def test_rescore_help_names_no_other_tools_files() -> None:
    result = CliRunner().invoke(vae, ["rescore", "--help"])
    assert result.exit_code == 0
    for name in ("all_summary", ".txt", "metrics.json", "conversation_log"):
        assert name not in result.output
