"""The Markdown scorecard, rendered as GitHub would (CommonMark + tables, raw HTML on)."""

from __future__ import annotations

import html
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

from markdown_it import MarkdownIt

from tests.scorer_service.gate.runs import built_to_fail, judge_gated, standard
from tests.scorer_service.report.runs import RUN_A, RUN_B, make_pair
from vae.scorer_service.gate import Case, GateSpec, gate
from vae.scorer_service.gate.markdown import md_text, summary_markdown, write_summary

HOSTILE = ("a | b\nsecond line\r\nthird <script>alert(1)</script> <b>bold</b> &amp; "
           "[link](javascript:alert(1)) ![img](http://x/y.png) **star** `code` @octocat "
           "# not a heading \\ back \x00\x1b[31m \ud800")  # fmt: skip
ALLOWED_TAGS = {"h2", "h3", "p", "strong", "table", "thead", "tbody", "tr", "th", "td", "br", "a"}


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "br" and self._cell is not None:
            self._cell.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def render(markdown: str) -> _Html:
    page = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    parsed = _Html()
    parsed.feed(page)
    return parsed


def test_the_scorecard_says_what_a_reader_needs(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    make_pair(db)
    result = gate(db, RUN_B, GateSpec(min_success=0.9, baseline=RUN_A))
    text = summary_markdown(replace(result, links={"report_url": "https://ci.example/r (1)"}))
    assert text.startswith("## ❌ vae gate: failed: the agent missed the gate (exit 1)\n")
    assert "**Success rate 50.0%** — 1 passed, 1 failed of 2 decided; **0 unscored** of 2" in text
    assert "[report](https://ci.example/r%20%281%29)" in text
    assert f"### Against baseline {RUN_A}" in text and "1 regressions, 1 fixes" in text
    page = render(text)
    (regressed,) = [r for r in page.rows if r and r[0] == "change_flight" and len(r) == 2]
    assert "ACTION_MATCH" in regressed[1] and "saturday" in regressed[1]
    assert any(r[1] == "min-success" and "is below 90.0% by 40.0 points" in r[2] for r in page.rows)
    assert ("a", {"href": "https://ci.example/r%20%281%29"}) in page.tags
    path = write_summary(result, tmp_path / "s.md")
    write_summary(result, path, append=True)
    assert path.read_text().count("## ❌ vae gate") == 2


def test_unscored_sessions_are_listed_with_their_cause(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    text = summary_markdown(gate(db, judge_gated(db), GateSpec()))
    assert text.startswith("## ⚠️ vae gate: could not decide (exit 3)")
    assert "### Unscored scenarios (1)" in text
    assert any(r[0] == "ask" and r[2].startswith("JUDGE_PASSED:") for r in render(text).rows)


def test_hostile_bot_text_stays_text_and_tables_stay_tables(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    result = gate(db, standard(db), GateSpec())
    evil = [Case(f"evil_{i}", "evil", 0, f"dom|{i}\n<i>", f"s{i}", "failed", reason=HOSTILE)
            for i in range(3)]  # fmt: skip
    text = summary_markdown(replace(result, cases=[*result.cases, *evil]))
    assert "@octocat" not in text  # no mention
    page = render(text)
    assert {tag for tag, _ in page.tags} <= ALLOWED_TAGS, page.tags
    assert not any(attrs.get("href", "").startswith("javascript") for _, attrs in page.tags)
    failing = [r for r in page.rows if r and r[0].startswith("evil_")]
    assert len(failing) == 3 and all(len(r) == 3 for r in failing)  # one row, three cells each
    shown = failing[0][2]
    for piece in ("a | b", "<script>alert(1)</script>", "<b>bold</b>", "&amp;", "**star**",
                  "[link](javascript:alert(1))", "`code`", "@octocat", "# not a heading",
                  "\\ back"):  # fmt: skip
        assert piece in shown, piece
    assert shown.count("\n") == 2  # newlines became <br>, inside the cell
    assert failing[0][1] == "dom|0\n<i>"
    header = next(r for r in page.rows if r and r[0] == "scenario")
    assert header == ["scenario", "domain", "why"]


def test_md_text_is_bounded_and_inert() -> None:
    assert md_text("x" * 1000, limit=50) == "x" * 49 + "…"
    assert md_text("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert\\(1\\)&gt;"
    assert html.unescape(md_text("&lt;")) == "&lt;"  # an entity in bot text is shown as typed


def test_failures_unexpected_passes_and_expected_failures_are_apart(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    run = built_to_fail(db, "mixed", tagged=("book_ok", "book_wrong"))  # db_case fails, unmarked
    text = summary_markdown(gate(db, run, GateSpec()))
    assert text.startswith("## ❌ vae gate: failed: the agent missed the gate (exit 1)\n")
    assert (
        "**Success rate 0.0%** — 0 passed, 1 failed of 1 decided; 1 expected failures, "
        "**1 unexpectedly passed** (built to fail, left out of the rate)"
    ) in text
    page = render(text)
    sections = [line for line in text.splitlines() if line.startswith("### ")]
    assert sections == ["### Checks", "### Failing scenarios (1)",
                        "### Unexpectedly passed (built to fail) (1)",
                        "### Expected failures (built to fail) (1)"]  # fmt: skip
    rows = {r[0]: r for r in page.rows if len(r) == 3 and r[0] in ("book_ok", "book_wrong",
                                                                   "db_case")}  # fmt: skip
    assert rows["db_case"][2].startswith("DB_STATE_MATCH:")
    assert rows["book_ok"][2].startswith("unexpectedly passed: built to fail (expect-fail)")
    assert rows["book_wrong"][2].startswith("ACTION_MATCH: reference is not a subset")
    checks = {r[1]: (r[0], r[2]) for r in page.rows if len(r) == 3 and r[0] in ("✅", "❌")}
    assert checks["scenarios"][0] == "❌" and "db_case" in checks["scenarios"][1]
    assert checks["expect-fail"][0] == "❌" and "book_ok" in checks["expect-fail"][1]


def test_a_regression_of_a_scenario_built_to_fail_is_marked_not_counted(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    make_pair(db, built_to_fail_in_b=("change_flight",))
    text = summary_markdown(gate(db, RUN_B, GateSpec(baseline=RUN_A)))
    assert text.startswith("## ✅ vae gate: passed (exit 0)")
    rows = [r for r in render(text).rows if r and r[0].startswith("change_flight")]
    regressed, expected = sorted(rows, key=len)  # the regressions' table has two columns
    assert regressed[0] == "change_flight (built to fail: not counted)"
    assert expected[0] == "change_flight" and expected[2].startswith("ACTION_MATCH:")
