"""The report's first screen: the scorecard, then what failed and why.

Success rate (with how many sessions were decided and how many stayed
unscored, and why: the summary's ``unscored`` block, :mod:`vae.scorer_service.ledger.unscored`,
which also counts the sessions that never ended and were not scored at all;
a scoring without it, e.g. one imported from NeMo, falls back to its
``is_successful`` counts and the sessions' reasons), task success, latency
p50/p95, pass^k when scenarios were repeated — each with its change against
the baseline run when there is one — then success per domain and per signal
as coloured bars, then every failing (or unscored) session with its one-line
reason, linking to its details — those built to fail that passed among them,
then the expected failures apart, under the per-scenario rule's verdict (what
``vae gate`` without a threshold decides: :mod:`vae.recordings.scenarios.expect`).
"""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import Any

from vae.recordings.scenarios import expect
from vae.scorer_service import signals
from vae.scorer_service.ledger.unscored import unscored_line
from vae.scorer_service.report.style import rate_colour
from vae.scorer_service.report.svg import Bar, bar_chart, rate_legend


def pct(v: Any) -> str:
    return "n/a" if not isinstance(v, int | float) else f"{v * 100:.1f}%"


def badge(verdict: str) -> str:
    cls = verdict.replace(" ", "")
    return f'<span class="badge {escape(cls)}">{escape(verdict)}</span>'


def outcome_badge(session: dict[str, Any]) -> str:
    """The verdict's badge, then — for a scenario built to fail — how the gate counts it."""
    out = session.get("outcome", session["verdict"])
    if out not in ("xfailed", "xpassed"):
        return badge(session["verdict"])
    return (f'{badge(session["verdict"])} <span class="badge {out}" title="built to fail '
            f'({expect.EXPECT_FAIL_TAG})">{expect.WORDS[out]}</span>')  # fmt: skip


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _deltas(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    base = data.get("baseline")
    return {r["name"]: r for r in base["rates"]} if base else {}


def delta(row: dict[str, Any] | None) -> str:
    """``+9.1 pp`` (or ``-0.12 s``) coloured better/worse, or "" without a baseline."""
    if not row or row.get("change") is None:
        return ""
    change, unit = float(row["change"]), row.get("unit")
    text = (
        f"{change:+.2f} s" if unit == "seconds"
        else f"{change:+.2f}" if unit == "score"
        else f"{change * 100:+.1f} pp"
    )  # fmt: skip
    better = row.get("better")
    cls = "" if better is None else (" better" if better else " worse")
    return f'<span class="delta{cls}" title="change against the baseline run">{text}</span>'


def _note(counts: Any, row: dict[str, Any] | None) -> str:
    c = _dict(counts)
    decided = int(c.get("passed", 0)) + int(c.get("failed", 0))
    note = f"({c.get('passed', 0)}/{decided})" if decided else ""
    if c.get("unscored"):
        note += f" {c['unscored']} unscored"
    if row and row.get("change") is not None:
        note += f" {float(row['change']) * 100:+.1f} pp"
    return note.strip()


def _unscored(summary: dict[str, Any], sessions: list[dict[str, Any]]) -> tuple[int, str]:
    """How many sessions have no verdict, and the line that says why ("" when none)."""
    block = summary.get("unscored")
    if isinstance(block, dict):
        line = unscored_line(summary)
        return int(block.get("sessions", 0)), line and f'<div class="small">{escape(line)}</div>'
    # No unscored block (a NeMo-original or a failed scoring): the counts and the
    # sessions the report reads as unscored (also those the scoring holds no verdict for).
    causes = Counter(s["reason"] or "unscored" for s in sessions if s["verdict"] == "unscored")
    count = max(int(_dict(summary.get(signals.IS_SUCCESSFUL)).get("unscored", 0)), causes.total())
    if not causes:
        return count, ""
    text = "; ".join(f"{n}× {why}" for why, n in causes.most_common(3))
    return count, f'<div class="small">unscored: {escape(text)}</div>'


def scorecard(data: dict[str, Any]) -> str:
    summary = data["summary"]
    if not summary:
        return "<p>This run has no scoring yet: run <code>vae rescore</code> first.</p>"
    d = _deltas(data)
    counts = _dict(summary.get(signals.IS_SUCCESSFUL))
    passed, failed = int(counts.get("passed", 0)), int(counts.get("failed", 0))
    rate = summary.get("success_rate")
    colour = rate_colour(rate) if isinstance(rate, int | float) else "#555"
    lat = _dict(summary.get("latency"))
    unscored, why_unscored = _unscored(summary, data["sessions"])

    def sec(key: str) -> str:
        v = lat.get(key)
        return "n/a" if v is None else f"{v:.2f} s"

    outcomes = Counter(str(s.get("outcome", "")) for s in data["sessions"])
    built = (f' · <span class="built-to-fail">{outcomes["xfailed"]} expected failures, '
             f'{outcomes["xpassed"]} unexpectedly passed</span>'
             if outcomes["xfailed"] or outcomes["xpassed"] else "")  # fmt: skip
    kpis = [
        f'<div class="kpi"><span class="headline" style="color:{colour}">{pct(rate)}</span> '
        f'{delta(d.get("success rate"))}<div class="of">success rate · {passed} of '
        f"{passed + failed} decided sessions passed · "
        f'<span class="unscored-count">{unscored} unscored</span> · '
        f"{int(counts.get('not_applicable', 0))} n/a{built}</div>"
        f"{why_unscored}</div>",
        f'<div class="kpi">task success<b>{pct(summary.get("task_success_rate"))}</b>'
        f"{delta(d.get('task success rate'))}</div>",
        f'<div class="kpi">latency p50 / p95<b>{sec("p50_s")} / {sec("p95_s")}</b>'
        f"{delta(d.get('latency p50'))} {delta(d.get('latency p95'))}"
        f'<div class="small">{lat.get("count", 0)} responses</div></div>',
    ]
    hat, at = _dict(summary.get("pass_hat_k")), _dict(summary.get("pass_at_k"))
    if hat:
        k = max(hat, key=int)
        kpis.append(
            f'<div class="kpi">pass^{escape(k)} / pass@{escape(k)}<b>{pct(hat[k])} / '
            f"{pct(at.get(k))}</b>{delta(d.get(f'pass^{k}'))}"
            f'<div class="small">repeated trials</div></div>'
        )
    domains = [Bar("all scenarios", rate, _note(counts, d.get("success rate")))]
    for name, block in sorted(_dict(summary.get("domains")).items()):
        domains.append(
            Bar(name or "(none)", _dict(block).get("success_rate"),
                _note(_dict(block).get(signals.IS_SUCCESSFUL), d.get(f"domain {name or '(none)'}")))
        )  # fmt: skip
    sig = _dict(summary.get("signals"))
    per_signal = [
        Bar(name, _dict(sig.get(name)).get("rate"), _note(sig.get(name), d.get(name)))
        for name in signals.SUCCESS_SIGNALS
        if _dict(sig.get(name)).get("passed") or _dict(sig.get(name)).get("failed")
        or _dict(sig.get(name)).get("unscored")
    ]  # fmt: skip
    return (
        f'<section class="scorecard" id="scorecard">{"".join(kpis)}</section>'
        '<div class="scorecard">'
        + bar_chart(domains, title="Success rate by domain", css_class="chart success")
        + bar_chart(per_signal, title="Pass rate by signal", css_class="chart signals")
        + "</div>"
        + rate_legend()
    )


def _items(found: list[tuple[int, dict[str, Any]]]) -> str:
    return "".join(
        f'<li class="fail-item"><a href="#s-{i}">{escape(s["scenario_name"])}</a> '
        f'{outcome_badge(s)} <span class="small">{escape(s["domain"])}</span> — '
        f'<span class="why">{escape(s["reason"] or "see details")}</span></li>'
        for i, s in found
    )


def _rule(sessions: list[dict[str, Any]]) -> str:
    """The per-scenario rule's verdict: what `vae gate` without a threshold holds the run to."""
    broken = expect.rule_breakers((s["scenario_name"], s.get("outcome", "")) for s in sessions)
    if not broken:
        text = "kept: every decided scenario passed or failed as it was built to"
    else:
        counted = Counter(expect.WORDS[o] for _, o in broken)
        text = "broken by " + ", ".join(f"{n} {word}" for word, n in sorted(counted.items()))
    return (f'<p class="small rule">Per-scenario rule (<code>vae gate</code> without a '
            f"threshold): {escape(text)}</p>")  # fmt: skip


def failing_list(sessions: list[dict[str, Any]]) -> str:
    indexed = list(enumerate(sessions))
    bad = [(i, s) for i, s in indexed if s.get("outcome", s["verdict"]) in
           ("failed", "xpassed", "unscored")]  # fmt: skip
    expected = [(i, s) for i, s in indexed if s.get("outcome") == "xfailed"]
    rule = _rule(sessions)
    later = (f'<h3>Expected failures <span class="small">({len(expected)}, built to fail)'
             f'</span></h3><ol class="failing expected">{_items(expected)}</ol>'
             if expected else "")  # fmt: skip
    if not bad:
        said = "Nothing failed unexpectedly." if expected else "Nothing failed."
        return f'<h2>What failed</h2><p class="small">{said}</p>{rule}{later}'
    return (
        f'<h2>What failed <span class="small">({len(bad)} of {len(sessions)} sessions)</span>'
        f'</h2>{rule}<ol class="failing">{_items(bad)}</ol>{later}'
    )


def trials_table(summary: dict[str, Any]) -> str:
    """pass^k / pass@k per repeated scenario, per domain and overall (τ²-bench)."""
    hat, at = _dict(summary.get("pass_hat_k")), _dict(summary.get("pass_at_k"))
    if not hat:
        return ""
    ks = sorted(hat, key=int)

    def cells(h: dict[str, Any], a: dict[str, Any]) -> str:
        return "".join(f"<td class=num>{pct(h.get(k))} / {pct(a.get(k))}</td>" for k in ks)

    rows = [f"<tr><td><b>all repeated scenarios</b></td><td></td>{cells(hat, at)}</tr>"]
    for name, block in sorted(_dict(summary.get("domains")).items()):
        b = _dict(block)
        if _dict(b.get("pass_hat_k")):
            rows.append(
                f"<tr><td>domain {escape(name)}</td><td></td>"
                f"{cells(_dict(b.get('pass_hat_k')), _dict(b.get('pass_at_k')))}</tr>"
            )
    for name, t in sorted(_dict(summary.get("trials")).items()):
        t = _dict(t)
        rows.append(
            f"<tr><td>{escape(name)}</td><td class=num>{t.get('passed')}/{t.get('trials')}"
            f"{' (' + str(t.get('undecided')) + ' unscored)' if t.get('undecided') else ''}</td>"
            f"{cells(_dict(t.get('pass_hat_k')), _dict(t.get('pass_at_k')))}</tr>"
        )
    head = "".join(f"<th>pass^{escape(k)} / pass@{escape(k)}</th>" for k in ks)
    return (
        '<h2>Repeated trials</h2><p class="small">pass^k: the chance that k trials all '
        "succeed, C(c,k)/C(n,k); pass@k: that at least one does, 1 − C(n−c,k)/C(n,k) "
        "(τ²-bench), over each scenario's decided trials</p>"
        f'<table class="trials"><tr><th>scenario</th><th>passed</th>{head}</tr>'
        f"{''.join(rows)}</table>"
    )
