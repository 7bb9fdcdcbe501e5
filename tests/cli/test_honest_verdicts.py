"""One row per failure kind of docs/scoring.md, each driven end to end through the CLI.

Real parts only: a real bridge on 127.0.0.1:0 with real gRPC test bots, a
real scorer service, the real ``openai`` client against a loopback judge or a
closed port, real SQLite files, a real ``vae run`` subprocess interrupted by
a real SIGINT, real NeMo result directories on disk. Each row asserts that
nothing in it reads as passed or completed, and that the exit code and the
output say what happened. (The undecodable-message and script-typo rows are
tested with the code that handles them: the Converse read loop and scenario
validation.)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tests.cli.honest_bridge_rows import (
    row_connector_refuses,
    row_ctrl_c_during_demo,
    row_ctrl_c_then_resume,
    row_missing_peer,
)
from tests.cli.honest_import_rows import (
    row_import_crashed,
    row_import_killed,
    row_import_symlinks,
    row_import_wrong_types,
)
from tests.cli.honest_judge_rows import (
    row_judge_garbage,
    row_judge_unreachable,
    row_no_judge_opted_out,
    row_no_judge_refused,
    row_rescore_killed,
)
from vae.bridge_service.server import BridgeServer

#: Rows that drive the in-process bridge; the others start what they need themselves.
BRIDGE_ROWS: dict[str, Callable[[Path, BridgeServer], Awaitable[None]]] = {
    "Ctrl-C then resume": row_ctrl_c_then_resume,
    "a missing peer": row_missing_peer,
    "a connector that refuses": row_connector_refuses,
}
ROWS: dict[str, Callable[[Path], Awaitable[None]]] = {
    "judge unreachable": row_judge_unreachable,
    "judge answering garbage": row_judge_garbage,
    "no judge configured: refused": row_no_judge_refused,
    "no judge, opted out: unscored": row_no_judge_opted_out,
    "a rescore killed mid-scoring": row_rescore_killed,
    "Ctrl-C during vae demo": row_ctrl_c_during_demo,
    "an imported attempt that crashed": row_import_crashed,
    "an imported attempt that was killed": row_import_killed,
    "wrong-typed NeMo fields": row_import_wrong_types,
    "symlinked and special NeMo files": row_import_symlinks,
}


@pytest.mark.parametrize("row", list(ROWS))
async def test_failure_row(row: str, tmp_path: Path) -> None:
    await ROWS[row](tmp_path)


@pytest.mark.parametrize("row", list(BRIDGE_ROWS))
async def test_failure_row_on_a_bridge(row: str, tmp_path: Path, bridge: BridgeServer) -> None:
    await BRIDGE_ROWS[row](tmp_path, bridge)
