"""The report's "Judge vs labels" section: there when the run has labels, escaped, and
the same numbers as ``vae scores agree``."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.scorer_service.report.browser import open_page
from tests.scorer_service.report.runs import make_run, score
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.labels.labelling import make_label, store_labels
from vae.scorer_service.report import report_data
from vae.scorer_service.report.html import render

EVIL = "</script><script>window.pwned=1</script><img src=http://x.invalid/a onerror=1>"


def test_the_section_appears_with_labels_and_shows_them_as_text(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run_id = make_run(db)
    score(db, run_id)
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id)
        assert data["labels"] is None
        assert "Judge vs labels" not in render(data)
        labels = [
            make_label(reader, run_id, "book_table", "pass", by="ann"),
            # The scoring fails change_flight; ann says it passed, with a hostile note.
            make_label(reader, run_id, "change_flight", "pass", note=EVIL, by="ann"),
            make_label(reader, run_id, "change_flight", "fail", by="bob"),
        ]
    asyncio.run(store_labels(db, labels))
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id)
    block = data["labels"]
    (entry,) = block["scorings"]
    session = next(r for r in entry["rows"] if r["row"] == "session (is_successful)")
    # change_flight: ann pass, bob fail -> split, counted apart; book_table pass/passed.
    assert session["n"] == 1 and session["apart"] == {"labellers disagree": 1}
    html = tmp_path / "r.html"
    html.write_text(render(data), encoding="utf-8")
    with open_page(html) as (page, watch):
        section = page.locator("#judge-vs-labels")
        assert section.locator("h2").inner_text() == "Judge vs labels"
        assert "labellers disagree: 1" in section.inner_text()
        assert "undefined (a single class on both sides)" in section.inner_text()
        assert page.evaluate("() => window.pwned") is None
        assert "ann vs bob" in section.inner_text()
    assert watch.errors == [] and watch.requests == []
    # ann changes her mind on book_table: a disagreement, her note beside the judge's reason.
    with RecordingReader(db) as reader:
        labels = [make_label(reader, run_id, "book_table", "fail", note=EVIL, by="ann")]
    asyncio.run(store_labels(db, labels))
    with RecordingReader(db) as reader:
        data = report_data(reader, run_id)
    html.write_text(render(data), encoding="utf-8")
    with open_page(html) as (page, watch):
        rows = page.locator("#judge-vs-labels table.disagreements tr")
        assert rows.count() == 2
        assert EVIL in rows.nth(1).inner_text() and "book_table" in rows.nth(1).inner_text()
        assert page.evaluate("() => window.pwned") is None
    assert watch.errors == [] and watch.requests == []
