"""`vae gate --max-cost-per-call USD --prices FILE`: 0 within, 1 above, 3 unknown, 2 misuse.

On a real scored run (tests/recordings/cost/test_cost.py records it): session
``a`` cost $0.00098 by hand, session ``b`` cannot be priced (a model with no
price, STT with no model); a superseded attempt with a million tokens is not
counted.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner, Result

from tests.recordings.cost.test_cost import PRICES, record
from vae.cli.main import vae
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore


def invoke(*args: str) -> Result:
    return CliRunner().invoke(vae, list(args), env={"GITHUB_STEP_SUMMARY": None})


async def scored(db: Path, with_b: bool) -> str:
    run_id, _, _ = await record(db, with_b)  # without b, every price is known
    await rescore(db, run_id, ScoringConfig())
    return run_id


def test_the_cost_gate_exit_codes(tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    known = tmp_path / "known.db"
    run_id = asyncio.run(scored(known, with_b=False))
    base = ["gate", run_id, "--db", str(known), "--prices", str(prices)]
    within = invoke(*base, "--max-cost-per-call", "0.001", "--json")
    assert within.exit_code == 0, within.output
    (check,) = [c for c in json.loads(within.stdout)["checks"] if c["name"] == "max-cost-per-call"]
    assert check["status"] == "passed" and check["actual"] == 0.00098
    above = invoke(*base, "--max-cost-per-call", "0.0009")
    assert above.exit_code == 1, above.output
    assert "1 of 1 calls cost more than $0.0009 (highest $0.0010" in above.stdout

    unknown = tmp_path / "unknown.db"
    run_id = asyncio.run(scored(unknown, with_b=True))
    result = invoke("gate", run_id, "--db", str(unknown), "--prices", str(prices),
                    "--max-cost-per-call", "100")  # fmt: skip
    assert result.exit_code == 3, result.output  # never a pass on an unknown price
    assert "the cost of 1 of 2 sessions is unknown" in result.stdout
    assert "llm mystery" in result.stdout and "stt (model not reported)" in result.stdout
    with RecordingReader(unknown) as r:
        assert len(r.sessions(run_id)) == 3  # the superseded attempt is there, not counted

    misuse = invoke("gate", run_id, "--db", str(unknown), "--max-cost-per-call", "1")
    assert misuse.exit_code == 2 and "--max-cost-per-call needs --prices" in misuse.output
    broken = tmp_path / "broken.toml"
    broken.write_text("[[prices]]\nmodel = 'x'\nper_second = -3\n")
    bad = invoke("gate", run_id, "--db", str(unknown), "--prices", str(broken),
                 "--max-cost-per-call", "1")  # fmt: skip
    assert (
        bad.exit_code == 2 and "must not be negative" in bad.output and "broken.toml" in bad.output
    )
