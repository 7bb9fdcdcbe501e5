"""The report's "Judge vs labels" section: the shown scoring against the run's human labels.

Shown only when the run has labels (``vae label``, ``vae review``, ``vae
labels import``). It is ``vae scores agree`` for one scoring
(:mod:`vae.scorer_service.labels.agreement_report`): per row n, percent agreement and
Cohen's κ with its 95 % interval (``undefined`` with the reason, never 0 or
1), what was counted apart, the confusion matrix of all labels, each
disagreement with the judge's reason beside the label's note, and κ between
labellers. Every value from the store is escaped.
"""

from __future__ import annotations

from html import escape
from typing import Any

from vae.recordings.models import ScoringRecord
from vae.recordings.read.reader import RecordingReader


def labels_block(reader: RecordingReader, scoring: ScoringRecord | None) -> dict[str, Any] | None:
    """The agreement of ``scoring`` with its run's labels; None without labels or a scoring."""
    from vae.scorer_service.labels.agreement_report import agreement_report

    if scoring is None or not reader.labels(scoring.run_id):
        return None
    return agreement_report(reader, [scoring])


def _pct(v: Any) -> str:
    return "n/a" if not isinstance(v, int | float) else f"{v * 100:.1f}%"


def _kappa(row: dict[str, Any]) -> str:
    if row["kappa"] is None:
        return f'<span class="small">undefined ({escape(str(row["kappa_undefined"]))})</span>'
    low, high = row["kappa_ci95"]
    return f"<b>{row['kappa']:.2f}</b> <span class=small>[{low:.2f}, {high:.2f}]</span>"


def _apart(row: dict[str, Any]) -> str:
    parts = []
    for what, n in row["apart"].items():
        causes = row["unscored_causes"] if what == "unscored" else {}
        why = " (" + ", ".join(f"{c}: {k}" for c, k in causes.items()) + ")" if causes else ""
        parts.append(f"{escape(what)}: {n}{escape(why)}")
    return "; ".join(parts) or "-"


def labels_section(block: dict[str, Any]) -> str:
    (entry,) = block["scorings"]
    rows = "".join(
        f"<tr><td>{escape(r['row'])}</td><td class=num>{r['n']}</td>"
        f"<td class=num>{_pct(r['percent_agreement'])}</td><td>{_kappa(r)}</td>"
        f"<td class=small>{_apart(r)}</td></tr>"
        for r in entry["rows"]
    )
    every = next((r for r in entry["rows"] if r["row"] == "all labels"), None)
    confusion = ""
    if every is not None:
        c = every["confusion"]
        confusion = (
            '<table class="confusion"><tr><th></th><th>judge passed</th><th>judge failed</th></tr>'
            f"<tr><th>label pass</th><td class=num>{c['pass']['passed']}</td>"
            f"<td class=num>{c['pass']['failed']}</td></tr>"
            f"<tr><th>label fail</th><td class=num>{c['fail']['passed']}</td>"
            f"<td class=num>{c['fail']['failed']}</td></tr></table>"
        )
    disagreements = "".join(
        f"<tr><td>{escape(d['scenario'])}</td><td>{escape(d['item'])}</td>"
        f"<td>{escape(d['label'])} ({escape(', '.join(d['labellers']))})</td>"
        f"<td>{escape('; '.join(n['by'] + ': ' + n['note'] for n in d['notes']) or '-')}</td>"
        f"<td>{escape(d['verdict'])}</td><td class=why>{escape(d['reason'] or '-')}</td></tr>"
        for d in entry["disagreements"]
    )
    pairs = "".join(
        f"<li>{escape(p['a'])} vs {escape(p['b'])}: n {p['n']}, "
        f"{_pct(p['percent_agreement'])} agree, κ {_kappa(p)}</li>"
        for p in block["inter_annotator"]
    )
    who = ", ".join(block["labellers"])
    return (
        '<section class="labels" id="judge-vs-labels"><h2>Judge vs labels</h2>'
        f'<p class="small">{block["labels"]} label(s) by {escape(who)} (their consensus; '
        "split and can't-tell items are counted apart, as are unscored verdicts — never "
        "as agreement). κ: Cohen's kappa with its 95% interval; see docs/scoring.md.</p>"
        '<table class="agreement"><tr><th>row</th><th>n</th><th>agree</th>'
        f"<th>κ [95% CI]</th><th>counted apart</th></tr>{rows}</table>"
        + confusion
        + (
            "<h3>Disagreements</h3><table class=disagreements><tr><th>scenario</th>"
            "<th>item</th><th>label (by)</th><th>label's note</th><th>verdict</th>"
            f"<th>judge's reason</th></tr>{disagreements}</table>"
            if disagreements
            else '<p class="small">no disagreements</p>'
        )
        + (f"<h3>Between labellers</h3><ul>{pairs}</ul>" if pairs else "")
        + "</section>"
    )
