"""The report in Chromium: a mishearing on the first screen, said and heard side by side.

A session whose agent misheard a date fails with the mishearing named first,
above the fold; its details show, per turn, what the caller said beside what
the agent heard with the difference marked. Heard text is bot text: hostile
markup in it stays text.
"""

from __future__ import annotations

from pathlib import Path

from tests.factories import SessionSpec, ToolCallSpec, Turn, scenario, write_run_sync
from tests.scorer_service.report.browser import open_page
from tests.scorer_service.report.runs import score
from tests.scorer_service.report.test_report_browser import write_report

EVIL = "</script><script>window.pwned=1</script><img src=x onerror=1>"
SAID = "Move booking S J two two three zero to April twentieth."


def test_the_mishearing_is_on_the_first_screen_and_marked_in_place(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    reference = {"tool": "change_flight", "booking_id": "SJ2230", "new_date": "2026-04-20"}
    turns = [
        Turn("agent", 0.5, 1.5, "SkyJet, how can I help?"),
        Turn("user", 2.0, 4.0, SAID, heard="move booking SJ2230 to April twenty first"),
        Turn("agent", 4.6, 6.0, "Done."),
        Turn("user", 6.5, 7.5, "Thanks, bye.", heard=f"thanks {EVIL}"),
    ]
    call = ToolCallSpec("change_flight", {**reference, "new_date": "2026-04-21"}, at_s=4.4)
    spec = SessionSpec("misheard", turns=turns, tool_calls=[call])
    write_run_sync(db, [scenario("misheard", reference_answer=reference)], [spec], run_id="m")
    score(db, "m")
    html = write_report(db, tmp_path / "m.html", "m")
    with open_page(html) as (page, watch):
        assert page.evaluate("() => window.pwned") is None
        first = page.locator("li.fail-item").first
        text = first.inner_text()
        assert (
            'the agent heard "April twenty first" where the caller said "April twentieth"' in text
        )
        assert text.index("the agent heard") < text.index("ACTION_MATCH")
        box = first.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 800, "above the fold"
        table = page.locator("table.heard")
        assert table.locator("tr").count() == 3  # a header and the caller's two turns
        assert table.locator("mark.hd-sub", has_text="twentieth").count() == 1
        assert table.locator("mark.hd-sub", has_text="twenty first").count() == 1
        # Hostile heard text: shown as text, marked as heard-but-never-said.
        assert EVIL in table.inner_text()
        assert table.locator("mark.hd-ins").count() >= 1
    assert watch.errors == [] and watch.requests == []
