"""The report's first screen on scenarios built to fail: verdicts kept, outcomes shown.

A ``standard`` run where book_ok (passes) is built to fail, book_wrong
(fails) is built to fail and db_case fails unmarked: the report keeps each
verdict, says how the gate counts it (expected failure, unexpectedly passed),
lists what breaks the per-scenario rule first and the expected failures
apart, as ``vae gate`` without a threshold decides.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from tests.scorer_service.gate.runs import built_to_fail, standard
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.report import report_data
from vae.scorer_service.report.html import render


class _Lists(HTMLParser):
    """The text of each ``<ol>`` of the page, by its class."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lists: dict[str, list[str]] = {}
        self._current: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "ol":
            self._current = dict(attrs).get("class") or ""
            self.lists[self._current] = []
        elif tag == "li" and self._current is not None:
            self.lists[self._current].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "ol":
            self._current = None

    def handle_data(self, data: str) -> None:
        if self._current is not None and self.lists[self._current]:
            self.lists[self._current][-1] += data


def _data(db: Path, run: str) -> dict[str, object]:
    with RecordingReader(db) as reader:
        return report_data(reader, run, include_audio=False)


def test_outcomes_order_and_the_rule_on_the_first_screen(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run = built_to_fail(db, "mixed", tagged=("book_ok", "book_wrong"))
    data = _data(db, run)
    rows = [(s["scenario_name"], s["verdict"], s["expect_fail"], s["outcome"])
            for s in data["sessions"]]  # type: ignore[attr-defined]  # fmt: skip
    assert rows == [("db_case", "failed", False, "failed"),  # what needs attention first
                    ("book_ok", "passed", True, "xpassed"),
                    ("book_wrong", "failed", True, "xfailed")]  # fmt: skip
    html = render(data)
    first = html[: html.index('<details class="session"')]
    assert "Per-scenario rule (<code>vae gate</code> without a threshold): broken by 1 failed, " \
           "1 unexpectedly passed" in first  # fmt: skip
    assert "1 expected failures, 1 unexpectedly passed" in first
    lists = _Lists()
    lists.feed(first)
    failing, expected = lists.lists["failing"], lists.lists["failing expected"]
    assert [x.split(" ")[0] for x in failing] == ["db_case", "book_ok"]
    assert "unexpectedly passed" in failing[1] and "built to fail" in failing[1]
    assert [x.split(" ")[0] for x in expected] == ["book_wrong"]
    assert "failed expected failure" in expected[0] and "ACTION_MATCH:" in expected[0]
    # The session blocks: what breaks the rule is open, the expected failure closed.
    assert '<details class="session" id="s-1" data-idx="1" data-verdict="passed" open>' in html
    assert '<details class="session" id="s-2" data-idx="2" data-verdict="failed">' in html


def test_a_run_without_scenarios_built_to_fail_reads_as_before(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    data = _data(db, standard(db))
    assert [s["outcome"] for s in data["sessions"]] == ["failed", "failed", "passed"]  # type: ignore[attr-defined]
    html = render(data)
    assert "broken by 2 failed" in html and "expected failures" not in html.lower()
    kept = tmp_path / "kept.db"
    html = render(_data(kept, built_to_fail(kept, "kept", tagged=("book_wrong", "db_case"))))
    assert '<h2>What failed</h2><p class="small">Nothing failed unexpectedly.</p>' in html
    assert "kept: every decided scenario passed or failed as it was built to" in html
