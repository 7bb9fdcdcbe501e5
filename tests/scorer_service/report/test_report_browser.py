"""The report in headless Chromium: what a person sees and can do with it.

Every test also asserts the page logged no error and made no request beyond
its own file (and, with audio kept as files, that audio folder).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.factories import SessionSpec, Turn, scenario, write_run_sync
from tests.scorer_service.report.browser import open_page
from tests.scorer_service.report.runs import make_large_run, make_pair, make_run, score
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.report import report_data
from vae.scorer_service.report.html import render

#: The stated budget for opening a 200-session report (docs/reports.md, "Size").
OPEN_200_BUDGET_S = 15.0


def write_report(db: Path, out: Path, run: str, **kwargs: object) -> Path:
    with RecordingReader(db) as reader:
        out.write_text(render(report_data(reader, run, **kwargs)), encoding="utf-8")  # type: ignore[arg-type]
    return out


@pytest.fixture
def report(tmp_path: Path) -> Path:
    db = tmp_path / "vae.db"
    run_id = make_run(db)
    score(db, run_id)
    return write_report(db, tmp_path / "report.html", run_id)


def test_first_viewport_holds_the_success_rate_and_the_first_failure_with_its_reason(
    report: Path,
) -> None:
    with open_page(report) as (page, watch):
        rate = page.locator("#scorecard .headline")
        assert rate.inner_text() == "50.0%"
        assert "0 unscored" in page.locator("#scorecard .unscored-count").inner_text()
        first = page.locator("li.fail-item").first
        assert "change_flight" in first.inner_text()
        assert "date: expected friday, recorded saturday" in first.inner_text()
        for box in (rate.bounding_box(), first.bounding_box()):
            assert box is not None and box["y"] + box["height"] <= 800, "above the fold"
        meta = page.locator("details#metadata")
        assert meta.get_attribute("open") is None, "metadata starts collapsed"
        assert page.locator("details#metadata pre").first.is_visible() is False
    assert watch.errors == [] and watch.requests == []


def test_clicking_a_transcript_line_seeks_the_audio_and_moves_the_playhead(report: Path) -> None:
    with open_page(report) as (page, watch):
        session = page.locator("details.session", has_text="change_flight")
        line = session.locator("tr.line", has_text="Move my flight to Friday.")
        t = float(line.get_attribute("data-t") or "nan")
        assert t == pytest.approx(4.0, abs=0.05)
        line.click()
        page.wait_for_function(
            "([t]) => { const a = [...document.querySelectorAll('details.session')].find("
            "d => d.textContent.includes('change_flight')).querySelector('audio');"
            " return Math.abs(a.currentTime - t) < 0.6; }",
            arg=[t],
            timeout=10_000,
        )
        head = session.locator("svg.timeline line.playhead")
        assert head.get_attribute("visibility") == "visible"
        left, width = (float(session.locator("svg.timeline").get_attribute(k) or "0")
                       for k in ("data-left", "data-width"))  # fmt: skip
        end = float(session.locator("svg.timeline").get_attribute("data-end") or "1")
        assert float(head.get_attribute("x1") or "0") == pytest.approx(
            left + t / end * width, abs=0.7 / end * width
        )
    assert watch.errors == [] and watch.requests == []


def test_the_failing_only_filter_hides_passing_sessions(report: Path) -> None:
    with open_page(report) as (page, watch):
        passing = page.locator("details.session[data-verdict=passed]")
        failing = page.locator("details.session[data-verdict=failed]")
        assert passing.is_visible() and failing.is_visible()
        page.locator("#f-failing").check()
        assert not passing.is_visible() and failing.is_visible()
        assert page.locator("#f-count").inner_text() == "1 of 2 sessions shown"
        page.locator("#f-failing").uncheck()
        page.locator("#f-domain").select_option("airline")
        assert not passing.is_visible()
        page.locator("#f-domain").select_option("")
        page.locator("#f-sort").select_option("name")
        names = page.locator("details.session > summary b").all_inner_texts()
        assert names == ["book_table", "change_flight"]
        page.locator("#collapse-all").click()
        assert not page.locator("details.session[open]").count()
    assert watch.errors == [] and watch.requests == []


def test_a_regression_against_the_baseline_comes_first_in_the_regression_colour(
    tmp_path: Path,
) -> None:
    db = tmp_path / "vae.db"
    run_a, run_b = make_pair(db)
    html = write_report(db, tmp_path / "cmp.html", run_b, baseline_run=run_a)
    with open_page(html) as (page, watch):
        rows = page.locator("section.baseline table.changes tr")
        first = rows.nth(1)
        assert first.get_attribute("class") == "regression"
        assert "change_flight" in first.inner_text() and "saturday" in first.inner_text()
        colour = first.locator("td.change").evaluate("e => getComputedStyle(e).color")
        assert colour == "rgb(198, 40, 40)"  # style.REGRESSION
        assert rows.nth(2).get_attribute("class") == "fix"
        fix_colour = rows.nth(2).locator("td.change").evaluate("e => getComputedStyle(e).color")
        assert fix_colour == "rgb(46, 125, 50)"
        delta = page.locator("#scorecard .delta").first
        assert delta.inner_text() == "+0.0 pp"
        assert "skyjet-agent 2.0" in page.locator("section.baseline table.config").inner_text()
    assert watch.errors == [] and watch.requests == []


def test_hostile_bot_text_stays_text_and_the_page_reads_without_javascript(
    tmp_path: Path,
) -> None:
    db = tmp_path / "vae.db"
    evil = "</script><script>window.pwned=1</script><img src=http://x.invalid/a onerror=1>"
    # Names and tags follow the identifier grammar; the domain and all bot text are free text.
    spec = SessionSpec("evil-name", turns=[Turn("agent", 0.5, 2.0, evil),
                                           Turn("user", 2.5, 3.5, "ok")])  # fmt: skip
    doc = scenario("evil-name", domain="</script><b>dom</b>", reference_answer={"tool": evil},
                   success_signals=["ACTION_MATCH"])  # fmt: skip
    write_run_sync(db, [doc], [spec], run_id="h")
    score(db, "h")
    html = write_report(db, tmp_path / "h.html", "h")
    with open_page(html) as (page, watch):
        assert page.evaluate("() => window.pwned") is None
        assert evil in page.locator("table.transcript").inner_text()
        assert "</script><b>dom</b>" in page.locator("details.session summary").inner_text()
        assert page.locator("#f-domain option[value='</script><b>dom</b>']").count() == 1
        assert page.locator("#controls").is_visible()
    assert watch.errors == [] and watch.requests == []
    with open_page(html, javascript=False) as (page, watch):
        assert not page.locator("#controls").is_visible(), "controls need the script"
        assert page.locator("details.session").count() == 1
        assert page.locator("table.transcript").is_visible(), "failing sessions start open"
    assert watch.requests == []


def test_a_200_session_report_opens_within_the_stated_time(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run_id = make_large_run(db, 200)
    html = write_report(db, tmp_path / "large.html", run_id)
    size_mb = html.stat().st_size / 1e6
    with open_page(html, height=800) as (page, watch):
        started = time.perf_counter()
        page.reload(wait_until="load")
        page.wait_for_function("() => document.getElementById('f-count').textContent !== ''")
        opened_s = time.perf_counter() - started
        assert page.locator("details.session").count() == 200
        assert page.locator("li.fail-item").count() == 50
        page.locator("#f-failing").check()
        assert page.locator("#f-count").inner_text() == "50 of 200 sessions shown"
    print(f"200-session report: {size_mb:.1f} MB, opened in {opened_s:.2f} s")
    assert opened_s < OPEN_200_BUDGET_S
    assert watch.errors == [] and watch.requests == []
