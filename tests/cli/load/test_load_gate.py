"""``vae load --min-concurrency N``: the knee as a gate, with the exit codes of ``vae gate``.

On the virtual clock (seconds): an agent that holds 3 calls fails a gate of 5
(exit 1, the gate's line in the JSON) and passes a gate of 3 (exit 0).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.load.runs import run_load

STEPS = ("--agent-capacity", "3", "--steps", "1,3,4", "--calls", "4", "--clock", "virtual")


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("minimum", "code"), [(5, 1), (3, 0)])
async def test_the_gate_on_the_knee(tmp_path: Path, minimum: int, code: int) -> None:
    got, doc, err = await run_load(tmp_path / "load.db", *STEPS, "--min-concurrency",
                                   str(minimum))  # fmt: skip
    assert got == code, err[-3000:]
    assert doc["knee"] == 4 and doc["knee_detail"]["held"] == 3
    assert doc["gate"]["code"] == code
    assert ("held only 3" if code else "held 3 calls at once") in doc["gate"]["message"]
