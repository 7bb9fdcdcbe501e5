"""``vae load`` on the real clock finds the knee of an agent with a known capacity.

The reference agent holds 3 calls at its base latency and answers much more
slowly beyond (``--agent-capacity 3``). Steps 1, 2, 3, 4 and 6 run on the
real clock, each an ordinary run; the knee must be 4, the first step above
capacity, never a step at or below 3; the JSON carries every field the issue
lists, every step's run is a real run of the store, and the report's chart
shows the knee at 4 in Chromium with JavaScript off (a sync test: Playwright's sync
API runs outside any event loop). About a minute.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.cli.load.runs import run_load, runs_like
from tests.scorer_service.report.browser import open_page

STEPS = [1, 2, 3, 4, 6]


@pytest.mark.timeout(300)
def test_the_knee_of_a_capacity_3_agent_is_step_4_and_the_report_shows_it(
    tmp_path: Path,
) -> None:
    db, report = tmp_path / "load.db", tmp_path / "load.html"
    code, doc, err = asyncio.run(
        run_load(
            db, "--agent-capacity", "3", "--steps", ",".join(map(str, STEPS)),
            "--step-duration", "6s", "--report", str(report),
        )
    )  # fmt: skip
    assert code == 0, err[-3000:]
    steps = doc["steps"]
    assert [s["concurrency"] for s in steps] == STEPS
    for s in steps:
        for key in ("concurrency", "run_id", "calls", "success_rate", "latency_ms",
                    "harness_limited", "partial"):  # fmt: skip
            assert key in s, key
        assert set(s["latency_ms"]) >= {"p50", "p95", "p99"}
        assert s["calls"] >= s["concurrency"] and s["partial"] is False
        assert s["success_rate"] == 1.0, s
        assert s["stop_reasons"] == {"end_tool": s["calls"]}
    # Nothing here saturates the harness: the knee is the agent's.
    assert not any(s["harness_limited"] for s in steps), [s["harness"] for s in steps]
    assert doc["knee"] == 4, doc["knee_detail"]
    assert doc["knee_detail"]["held"] == 3
    base = steps[0]["latency_ms"]["p95"]
    assert all(s["latency_ms"]["p95"] <= 2 * base for s in steps[:3])
    assert all(s["latency_ms"]["p95"] > 2 * base for s in steps[3:])
    # Every step is an ordinary, completed run of the store.
    recorded = dict(runs_like(db, f"{doc['load_id']}-step%"))
    assert {s["run_id"] for s in steps} == set(recorded)
    assert set(recorded.values()) == {"completed"}

    assert doc["report"] == str(report)
    with open_page(report, javascript=False) as (page, watch):
        assert "knee at 4 concurrent calls" in page.locator("#knee").inner_text()
        chart = page.locator("svg.latency")
        marker = chart.locator("line.marker.knee")
        assert marker.count() == 1 and marker.get_attribute("data-x") == "4"
        box = marker.bounding_box()
        assert box is not None and box["height"] > 100, "the knee line spans the plot"
        point = chart.locator('circle.pt[data-series="p95"][data-x="4"]')
        assert float(point.get_attribute("cx") or "0") == pytest.approx(
            float(marker.get_attribute("x1") or "-1"), abs=0.2
        )
        assert chart.locator("text.marker-label.knee").text_content() == "knee: 4"
        assert page.locator("#steps tr.kneerow").get_attribute("data-concurrency") == "4"
    assert watch.errors == [] and watch.requests == []
