"""``vae bot agent --capacity``/``--base-latency``/``--slow-down``: the scripted agent only."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from vae.cli.main import vae


@pytest.mark.parametrize(
    "args",
    [
        ["bot", "user", "--capacity", "3"],
        ["bot", "user", "--slow-down", "0.1"],
        ["bot", "agent", "--base-latency", "0.2", "--llm-base-url", "http://x/v1", "--llm-model",
         "m"],
    ],
)  # fmt: skip
def test_pacing_is_refused_for_other_bots(args: list[str]) -> None:
    result = CliRunner().invoke(vae, [*args, "--bridge", "127.0.0.1:1"])
    assert result.exit_code == 2, result.output
    assert "pace the scripted agent" in result.stderr
    assert "Traceback" not in result.output


def test_a_capacity_below_one_is_a_usage_error() -> None:
    result = CliRunner().invoke(vae, ["bot", "agent", "--capacity", "0"])
    assert result.exit_code == 2 and "--capacity" in result.stderr


def test_the_help_explains_the_capacity() -> None:
    result = CliRunner().invoke(vae, ["bot", "--help"])
    assert "--capacity" in result.stdout and "vae bot agent --concurrency 8 --capacity 3" in (
        result.stdout
    )
