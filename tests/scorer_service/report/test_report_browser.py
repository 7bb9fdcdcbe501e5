"""The report opened in headless Chromium (Debian's), driven by Playwright.

Checks what a person would see: the charts, the session table, a timeline
and a playable stereo audio element — and that the page logs no errors.
Chromium is started with the flags that keep it off the network.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recordings.reader import RecordingReader
from scorer_service.report import render_html
from tests.conftest import require_tool
from tests.scorer_service.report.runs import make_run, score

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def test_report_renders_in_chromium_without_errors(tmp_path: Path) -> None:
    chromium = require_tool(
        "chromium", "bash scripts/ci_setup_browser.sh (apt-get install chromium)"
    )
    try:
        from playwright import sync_api
    except ImportError:
        message = "playwright missing; install it with: bash scripts/ci_setup_browser.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    db = tmp_path / "vae.db"
    run_id = make_run(db)
    first = score(db, run_id)
    second = score(db, run_id)
    with RecordingReader(db) as reader:
        html = render_html(reader, run_id, second, first)
    page_file = tmp_path / "report.html"
    page_file.write_text(html, encoding="utf-8")

    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=FLAGS, headless=True)
        try:
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
            page.goto(page_file.as_uri())
            assert page.locator("svg.chart.success rect.bar").count() >= 1
            assert page.locator("svg.chart.signals").count() == 1
            assert page.locator("svg.histogram").count() == 1
            assert page.locator("table.sessions tr.session-row").count() == 2
            assert page.locator("svg.timeline rect.speech.user").count() >= 2
            assert page.locator("svg.timeline g.marker.barge_in").count() == 1
            assert page.locator("section.diff table.flips").count() == 1
            audio = page.locator("audio").first
            assert audio.get_attribute("src", timeout=2000).startswith("data:audio/")
            # The browser decodes the embedded audio: its duration becomes known.
            page.wait_for_function(
                "() => { const a = document.querySelector('audio');"
                " return a && a.readyState >= 1 && a.duration > 1; }",
                timeout=10_000,
            )
            box = page.locator("svg.timeline").first.bounding_box()
            assert box is not None and box["width"] > 300
        finally:
            browser.close()
    assert errors == []
