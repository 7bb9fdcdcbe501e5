"""``vae load --soak``: 30 s of session time on the virtual clock, windows and the drift.

An agent that slows down steadily (the reference agent, 50 ms slower with
every call: ``--agent-slow-down 0.05``) must show a positive drift whose 95 %
confidence interval excludes 0; the same agent without the slow-down must
show none beyond noise. The soak's clock is session time: its windows cover
the 30 s asked (and the last calls' ends), whatever the wall time was. A
few seconds each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli.load.runs import run_load, runs_like

SOAK = ("--soak", "30s", "--concurrency", "2", "--clock", "virtual", "--window", "6s")


def _check_soak(doc: dict[str, Any], db: Path) -> dict[str, Any]:
    soak = doc["soak"]
    assert doc["steps"] == [] and doc["knee"] is None
    assert soak["concurrency"] == 2 and soak["duration_s"] == 30.0 and soak["window_s"] == 6.0
    windows = soak["windows"]
    assert windows[0]["start_s"] == 0.0 and windows[-1]["end_s"] >= 30.0
    assert sum(w["calls"] for w in windows) == soak["calls"] >= 8
    assert [f["failures"] for f in soak["failures_over_time"]] == [0] * len(windows)
    assert soak["success_rate"] == 1.0 and soak["partial"] is False
    (run,) = runs_like(db, f"{doc['load_id']}-soak-c2")
    assert run[1] == "completed"
    return soak


@pytest.mark.timeout(120)
async def test_a_steadily_slowing_agent_shows_a_significant_positive_drift(
    tmp_path: Path,
) -> None:
    db = tmp_path / "soak.db"
    code, doc, err = await run_load(db, *SOAK, "--agent-slow-down", "0.05")
    assert code == 0, err[-3000:]
    soak = _check_soak(doc, db)
    drift = soak["drift"]
    assert drift["significant"] is True
    low, high = drift["ci95_ms_per_hour"]
    assert 0 < low <= soak["drift_ms_per_hour"] <= high
    # 50 ms per call, about one call per slot every 7 s of session: ~25 s per hour of soak.
    assert 10_000 < soak["drift_ms_per_hour"] < 60_000
    p95 = [w["p95_ms"] for w in soak["windows"] if w["p95_ms"] is not None]
    assert p95[-1] > p95[0]


@pytest.mark.timeout(120)
async def test_a_steady_agent_shows_no_drift_beyond_noise(tmp_path: Path) -> None:
    db = tmp_path / "soak.db"
    code, doc, err = await run_load(db, *SOAK)
    assert code == 0, err[-3000:]
    soak = _check_soak(doc, db)
    drift = soak["drift"]
    assert drift["significant"] is False
    low, high = drift["ci95_ms_per_hour"]
    assert low <= 0 <= high


def test_a_soak_longer_than_one_run_holds_carries_on_in_further_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run plans at most 1,000 calls per scenario; here 2, so the soak needs several runs."""
    import json

    from click.testing import CliRunner

    from tests.cli.load.runs import SUITE
    from vae.cli.load import load_plan
    from vae.cli.main import vae

    monkeypatch.setattr(load_plan, "MAX_TRIALS", 2)
    db = tmp_path / "soak.db"
    result = CliRunner().invoke(
        vae, ["load", str(SUITE), "--db", str(db), "--tts", "buzz", "--json", *SOAK]
    )
    assert result.exit_code == 0, result.output
    soak = json.loads(result.stdout)["soak"]
    ids = soak["run_ids"]
    assert len(ids) >= 2 and ids[1].endswith("-part2")
    assert soak["calls"] >= 8 and soak["windows"][-1]["end_s"] >= 30.0
    assert dict(runs_like(db, "%-soak-c2%")) == {run: "completed" for run in ids}
