"""``vae scores agree`` as text: scorings side by side, the ranking, what was counted
apart, the confusion matrices, the disagreements and the labellers' own agreement.

Why a module: the numbers come from :mod:`vae.scorer_service.labels.agreement_report`
(also printed whole by ``--json``); how they are laid out for a terminal
changes on its own. κ that is undefined reads ``undefined (why)``, never 0 or 1.
"""

from __future__ import annotations

import string
from typing import Any

from vae.cli.tables import pct, table


def kappa_text(row: dict[str, Any], *, why: bool = False) -> str:
    if row["kappa"] is None:
        return f"undefined ({row['kappa_undefined']})" if why else "undefined"
    low, high = row["kappa_ci95"]
    return f"{row['kappa']:.2f} [{low:.2f}, {high:.2f}]"


def _name(entry: dict[str, Any]) -> str:
    parts = [entry["scoring_id"]]
    if entry["label"]:
        parts.append(f"“{entry['label']}”")
    if entry["judge_model"]:
        parts.append(f"judge {entry['judge_model']} ≥ {entry['judge_threshold']}")
    else:
        parts.append("no judge")
    if entry["subset"]:
        parts.append("subset")
    if entry["current"]:
        parts.append("current")
    return ", ".join(parts)


def _side_by_side(entries: list[dict[str, Any]], keys: list[str]) -> str:
    names: list[str] = []
    for e in entries:
        names += [r["row"] for r in e["rows"] if r["row"] not in names]
    head = ["row"]
    for k in keys:
        head += [f"{k}: n", "agree", "κ [95% CI]"]
    rows = []
    for name in names:
        cells: list[Any] = [name]
        for e in entries:
            r = next((x for x in e["rows"] if x["row"] == name), None)
            cells += ["-", "", ""] if r is None else [r["n"], pct(r["percent_agreement"]),
                                                      kappa_text(r)]  # fmt: skip
        rows.append(cells)
    right = [i for i in range(1, len(head)) if head[i].endswith(": n")]
    return table(head, rows, indent="  ", right=right)


def _apart(key: str, entry: dict[str, Any]) -> str:
    row = next((r for r in entry["rows"] if r["row"] == "all labels"), None)
    if row is None or not row["apart"]:
        return f"  {key}: nothing"
    parts = []
    for what, count in row["apart"].items():
        causes = row["unscored_causes"] if what == "unscored" else {}
        detail = f" ({', '.join(f'{c}: {n}' for c, n in causes.items())})" if causes else ""
        parts.append(f"{what}: {count}{detail}")
    return f"  {key}: " + "; ".join(parts)


def _confusion(key: str, entry: dict[str, Any]) -> list[str]:
    row = next((r for r in entry["rows"] if r["row"] == "all labels"), None)
    if row is None:
        return []
    c = row["confusion"]
    body = [["label pass", c["pass"]["passed"], c["pass"]["failed"]],
            ["label fail", c["fail"]["passed"], c["fail"]["failed"]]]  # fmt: skip
    return [f"  {key}:", table(["", "judge passed", "judge failed"], body, indent="    ",
                               right=(1, 2))]  # fmt: skip


def _disagreements(key: str, entry: dict[str, Any]) -> list[str]:
    found = entry["disagreements"]
    if not found:
        return [f"  {key}: none"]
    rows = []
    for d in found:
        notes = "; ".join(f"{n['by']}: {n['note']}" for n in d["notes"]) or "-"
        rows.append([d["scenario"], d["item"], f"{d['label']} ({', '.join(d['labellers'])})",
                     notes, d["verdict"], d["reason"] or "-"])  # fmt: skip
    head = ["scenario", "item", "label (by)", "label's note", "verdict", "judge's reason"]
    return [f"  {key} ({len(found)}):", table(head, rows, indent="    ")]


def render_agreement(doc: dict[str, Any]) -> str:
    entries = doc["scorings"]
    keys = (
        list(string.ascii_uppercase[: len(entries)])
        if len(entries) <= 26
        else [str(i + 1) for i in range(len(entries))]
    )
    key_of = {e["scoring_id"]: k for k, e in zip(keys, entries, strict=True)}
    whose = f"by {doc['by']}" if doc["by"] else (
        "consensus of " + ", ".join(doc["labellers"]) if len(doc["labellers"]) > 1
        else f"by {doc['labellers'][0]}"
    )  # fmt: skip
    lines = [f"Agreement with {doc['labels']} label(s) ({whose}) — run {', '.join(doc['runs'])}"]
    lines += [f"  {key_of[e['scoring_id']]}: {_name(e)}" for e in entries]
    lines += ["", _side_by_side(entries, keys).rstrip("\n")]
    lines += ["", "Coverage (labelled items the scoring decided): " + ", ".join(
        f"{key_of[e['scoring_id']]} {e['coverage']['decided']}/{e['coverage']['labelled']}"
        for e in entries
    )]  # fmt: skip
    if len(entries) > 1:
        by_id = {e["scoring_id"]: e for e in entries}
        order = " > ".join(
            f"{key_of[s]} (κ {kappa_text(by_id[s]['common'])}, "
            f"{pct(by_id[s]['common']['percent_agreement'])})"
            for s in doc["ranking"]
        )
        lines += [f"Ranking on the {doc['common_items']} item(s) every scoring decided "
                  f"(κ, then agreement, then coverage): {order}"]  # fmt: skip
        if len(doc["runs"]) > 1:
            lines.append("warning: these scorings belong to different runs: no item is common")
    for e in entries:
        for r in e["rows"]:
            if r["kappa"] is None and r["row"] == "all labels":
                lines.append(f"  {key_of[e['scoring_id']]}: κ {kappa_text(r, why=True)}")
    lines += ["", "Counted apart (never as agreement):"]
    lines += [_apart(key_of[e["scoring_id"]], e) for e in entries]
    lines += ["", "Confusion matrix, all labels:"]
    for e in entries:
        lines += _confusion(key_of[e["scoring_id"]], e)
    lines += ["", "Disagreements (label vs the scoring's verdict):"]
    for e in entries:
        lines += _disagreements(key_of[e["scoring_id"]], e)
    pairs = doc["inter_annotator"]
    if pairs:
        lines += ["", "Between labellers (items both decided):"]
        for p in pairs:
            agree = pct(p["percent_agreement"])
            lines.append(f"  {p['a']} vs {p['b']}: n {p['n']}, {agree} agree, "
                         f"κ {kappa_text(p, why=True)}")  # fmt: skip
    return "\n".join(line.rstrip("\n") for line in lines) + "\n"
