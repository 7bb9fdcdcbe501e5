"""The load report: charts without JavaScript, markers where the data says, hostile text inert.

Built from a :class:`LoadResult` made here (the end-to-end test,
``tests/cli/load/test_load_knee.py``, checks a report of real calls): a
harness-limited step and the knee get their markers, a soak its windows and
drift, and text from outside (the suite's path, stop reasons, reasons) is
escaped, so the page fetches and runs nothing.
"""

from __future__ import annotations

from pathlib import Path

from tests.scorer_service.report.browser import open_page
from vae.scorer_service.load.calls import Call
from vae.scorer_service.load.figures import figures
from vae.scorer_service.load.headroom import Headroom, ProcessLoad
from vae.scorer_service.load.knee import find_knee
from vae.scorer_service.load.result import LoadResult, SoakResult, StepResult
from vae.scorer_service.load.soak import soak
from vae.scorer_service.report.load.page import render

EVIL = '</script><img src="https://example.invalid/x.png" onerror="alert(1)">'


def calls(n: int, latency_s: float, stop: str = "end_tool", every_s: int = 1) -> list[Call]:
    return [
        Call(
            f"s{i}",
            "sc",
            i * every_s * 10**9,
            (i * every_s + 7) * 10**9,
            7.0,
            stop,
            True,
            "passed",
            latencies=((1.0, latency_s),),
        )
        for i in range(n)
    ]


def room(limited: bool) -> Headroom:
    process = ProcessLoad("bridge pid 1", "bridge + callers", 0.2, 1.0, 5.0, 9.0, 400, 0, 0, 2)
    return Headroom([process], limited, [f"bridge pid 1: {EVIL}"] if limited else [])


def result(tmp_path: Path) -> Path:
    steps = [
        StepResult(1, 1, "load-x-step1-c1", figures(calls(2, 0.7)), room(False)),
        StepResult(2, 2, "load-x-step2-c2", figures(calls(2, 3.0, stop=EVIL)), room(True)),
        StepResult(3, 4, "load-x-step3-c4", figures(calls(4, 2.9)), room(False)),
    ]
    load = LoadResult("load-x", EVIL, "real", 1, steps, database="x.db", agent=EVIL)
    load.knee = find_knee([s.point() for s in steps])
    load.advice = [f"add workers {EVIL}"]
    timeline = soak(calls(6, 0.8, every_s=7), "real", 1, 10.0, 40.0)
    load.soak = SoakResult(1, "load-x-soak-c1", timeline, room(False))
    path = tmp_path / "load.html"
    path.write_text(render(load), encoding="utf-8")
    return path


def test_markers_and_escaping(tmp_path: Path) -> None:
    page_file = result(tmp_path)
    text = page_file.read_text()
    assert "<img" not in text and "</script><" not in text and "<script" not in text
    for javascript in (False, True):
        with open_page(page_file, javascript=javascript) as (page, watch):
            chart = page.locator("svg.latency")
            assert chart.locator("line.marker.knee").get_attribute("data-x") == "4"
            assert chart.locator("line.marker.limited").get_attribute("data-x") == "2"
            headline = page.locator("#knee").inner_text()
            assert "knee at 4 concurrent calls; the agent held 1" in headline
            assert EVIL in page.locator("#steps").inner_text()
            assert page.locator("#windows tr").count() == 1 + 4
            assert "not significant" in page.locator("#drift").inner_text()
            # A p95 point for each of the four windows, and the trend's two ends.
            assert page.locator("svg.soak circle.pt").count() == 4 + 2
        assert watch.errors == [] and watch.requests == []
