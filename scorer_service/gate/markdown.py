"""A gate's result as a short Markdown scorecard: a GitHub step summary, a PR comment.

What it says, top-down: the verdict and the exit code; the run, scoring and
report; the success rate with its decided and unscored counts (and the
scenarios built to fail, left out of it), per domain; each check with its
numbers; the regressions against the baseline; the failing scenarios with
their one-line reasons; those built to fail that unexpectedly passed; the
unscored ones with their causes; the expected failures. Long lists stop at
:data:`MAX_ROWS` rows (the JUnit file and the report have them all).

Safe to paste into GitHub: every piece of bot text goes through :func:`md_text`,
which escapes Markdown and HTML (``<script>`` stays text, ``[x](y)`` is no
link, ``@name`` pings no one), turns newlines into ``<br>`` and ``|`` into
``\\|`` so a table row stays one row, and drops characters a page cannot show.
"""

from __future__ import annotations

import re
from pathlib import Path

from vae.scorer_service.gate.cases import Case
from vae.scorer_service.gate.checks import FAILED, UNDECIDED, pct
from vae.scorer_service.gate.decide import GateResult

MAX_ROWS = 50
CELL_LIMIT = 300
_MARK = {"passed": "✅", FAILED: "❌", UNDECIDED: "⚠️"}
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~])")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def md_text(value: object, limit: int = CELL_LIMIT) -> str:
    """Bot text as inert Markdown for one table cell or line (at most ``limit`` characters)."""
    text = _CONTROL.sub("\ufffd", str(value)).replace("\r\n", "\n").replace("\r", "\n")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _SPECIAL.sub(r"\\\1", text).replace("@", "&#64;")
    return "<br>".join(line.strip() for line in text.split("\n"))


def _url(value: str) -> str:
    """A link target that cannot end the link early."""
    return re.sub(r"[\s()<>\"'`]", lambda m: f"%{ord(m.group()):02X}", _CONTROL.sub("", value))


def _table(head: list[str], rows: list[list[str]], total: int) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    if total > len(rows):
        out.append(f"\n… and {total - len(rows)} more (the JUnit file and the report list all)")
    return [*out, ""]


def _links(result: GateResult) -> str:
    parts = [f"run **{md_text(result.run_id)}** ({md_text(result.run_status)})"]
    if result.scoring_id:
        parts.append(f"scoring {md_text(result.scoring_id)}")
    if result.links.get("report_url"):
        parts.append(f"[report]({_url(result.links['report_url'])})")
    if result.links.get("report"):
        parts.append(f"report file {md_text(result.links['report'])}")
    elif result.links.get("report_command"):
        parts.append(f"report: {md_text(result.links['report_command'])}")
    return " · ".join(parts)


def _scorecard(result: GateResult) -> list[str]:
    c = result.counts
    p50 = result.latency_p50_s
    latency = f" · latency p50 {p50:.2f} s" if p50 is not None else ""
    built = c["xfailed"] + c["xpassed"]
    expected = (f"; {c['xfailed']} expected failures, **{c['xpassed']} unexpectedly passed** "
                f"(built to fail, left out of the rate)" if built else "")  # fmt: skip
    lines = [
        f"**Success rate {pct(result.success_rate)}** — {c['passed']} passed, {c['failed']} "
        f"failed of {c['rated']} decided{expected}; **{c['unscored']} unscored** of "
        f"{c['sessions']} sessions{latency}",
        "",
    ]
    domains = result.domains()
    if len(domains) > 1:
        rows = [[md_text(d or "(none)"), pct(b["success_rate"]), str(b["passed"]),
                 str(b["failed"]), str(b["unscored"])] for d, b in domains.items()]  # fmt: skip
        lines += _table(["domain", "success", "passed", "failed", "unscored"], rows, len(rows))
    return lines


def _cases(title: str, cases: list[Case], why: str) -> list[str]:
    if not cases:
        return []
    rows = [[md_text(x.name), md_text(x.domain), md_text(x.reason or ", ".join(x.causes))]
            for x in cases[:MAX_ROWS]]  # fmt: skip
    return [f"### {title} ({len(cases)})", "", *_table(["scenario", "domain", why], rows,
                                                        len(cases))]  # fmt: skip


def _of(result: GateResult, outcome: str) -> list[Case]:
    return [x for x in result.cases if x.outcome == outcome]


def summary_markdown(result: GateResult) -> str:
    """The scorecard as Markdown (ends with a newline)."""
    lines = [
        f"## {_MARK[result.status]} vae gate: {result.headline} (exit {result.exit_code})",
        "",
        _links(result),
        "",
        *_scorecard(result),
    ]
    rows = [[_MARK[k.status], md_text(k.name), md_text(k.message)] for k in result.checks]
    lines += ["### Checks", "", *_table(["", "check", "result"], rows, len(rows))]
    cmp = result.comparison
    if cmp is not None:
        counts = cmp.counts()
        lines += [
            f"### Against baseline {md_text(cmp.run_a)}",
            "",
            f"{counts['regression']} regressions, {counts['fix']} fixes, {counts['same']} "
            f"unchanged, {counts['unscored']} not comparable (unscored), "
            f"{counts['only_a']} only in the baseline, {counts['only_b']} new",
            "",
        ]
        built = {x.scenario for x in result.cases if x.expect_fail}
        reg = [[md_text(s.scenario) + (" (built to fail: not counted)" if s.scenario in built
                                       else ""), md_text("; ".join(s.reasons[:3]))]
               for s in cmp.regressions[:MAX_ROWS]]  # fmt: skip
        if reg:
            lines += _table(["regressed scenario", "why"], reg, len(cmp.regressions))
    lines += _cases("Failing scenarios", _of(result, "failed"), "why")
    lines += _cases("Unexpectedly passed (built to fail)", _of(result, "xpassed"), "why")
    lines += _cases("Unscored scenarios", _of(result, "unscored"), "cause")
    lines += _cases("Expected failures (built to fail)", _of(result, "xfailed"), "why it failed")
    return "\n".join(lines).rstrip("\n") + "\n"


def write_summary(result: GateResult, path: str | Path, *, append: bool = False) -> Path:
    """Write (or, for ``$GITHUB_STEP_SUMMARY``, append) the scorecard to ``path``."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a" if append else "w", encoding="utf-8") as f:
        f.write(summary_markdown(result))
    return out
