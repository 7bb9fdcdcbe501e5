"""``vae scores agree``'s whole answer: several scorings side by side, ranked, and
how far the labellers agree with each other.

Why apart from :mod:`vae.scorer_service.labels.agreement` (one scoring against labels):
choosing a judge means comparing configurations, and labels are only as good
as their labellers. This module resolves what the user named (a scoring, or a
run meaning all its complete scorings), ranks the scorings and, where two
labellers labelled the same items, gives their Cohen's κ (inter-annotator
agreement: about the ceiling a judge can be expected to reach).

The ranking compares like with like: κ over the *common items* — those every
listed scoring decided — so a scoring cannot rank higher by leaving the hard
items unscored. Undefined κ ranks last; ties go to percent agreement on the
common items, then to coverage (how many labelled items the scoring decided).
"""

from __future__ import annotations

import itertools
from typing import Any

from vae.recordings.errors import RunSelectionError, StoreError
from vae.recordings.labels import LabelRecord, LabelVerdict
from vae.recordings.models import ScoringRecord
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.selection import select_run
from vae.recordings.write.label_rows import latest_per_labeller
from vae.scorer_service.labels.agreement import (
    DECIDED_LABELS,
    Decided,
    Tally,
    labelled_items,
    scoring_agreement,
)
from vae.scorer_service.labels.kappa import cohen_kappa
from vae.scorer_service.ledger.scorings import (
    ScoringNotFoundError,
    current_scoring,
    resolve_scoring,
)


class NoLabelsError(StoreError):
    """Nothing to hold the scorings against: the run has no labels (by that labeller)."""


def resolve_scorings(reader: RecordingReader, refs: list[str]) -> list[ScoringRecord]:
    """Each ref: an exact scoring id, else a run (all its complete scorings), else a
    unique scoring prefix. Duplicates are dropped; the order is kept."""
    found: list[ScoringRecord] = []
    for ref in refs:
        exact = reader.scoring(ref)
        if exact is not None:
            found.append(exact)
            continue
        try:
            run_id = select_run(reader, ref)
        except RunSelectionError:
            found.append(resolve_scoring(reader, ref))
            continue
        complete = [s for s in reader.scorings(run_id) if s.status == "complete"]
        if not complete:
            raise ScoringNotFoundError(f"run {run_id} has no complete scoring to compare")
        found.extend(complete)
    unique: dict[str, ScoringRecord] = {}
    for s in found:
        unique.setdefault(s.scoring_id, s)
    return list(unique.values())


def _rank_key(entry: dict[str, Any]) -> tuple[int, float, float, int]:
    row = entry["common"]
    kappa, percent = row["kappa"], row["percent_agreement"]
    return (
        0 if kappa is not None else 1,
        -(kappa or 0.0),
        -(percent if percent is not None else -1.0),
        -int(entry["coverage"]["decided"]),
    )


def _common(entries: list[dict[str, Any]], decided: list[Decided]) -> int:
    """Add each scoring's agreement on the items every scoring decided; their number."""
    keys = set.intersection(*(set(d) for d in decided)) if decided else set()
    for entry, pairs in zip(entries, decided, strict=True):
        tally = Tally("common items")
        for key in sorted(keys):
            tally.add(*pairs[key])
        entry["common"] = tally.as_dict()
    return len(keys)


def inter_annotator(labels: list[LabelRecord]) -> list[dict[str, Any]]:
    """Cohen's κ of each pair of labellers over the items both decided."""
    latest = latest_per_labeller(labels)
    by_person: dict[str, dict[tuple[str, str], str]] = {}
    for (sid, item, who), x in latest.items():
        if x.verdict is not LabelVerdict.UNSURE:
            by_person.setdefault(who, {})[(sid, item)] = str(x.verdict)
    out = []
    for a, b in itertools.combinations(sorted(by_person), 2):
        shared = sorted(set(by_person[a]) & set(by_person[b]))
        if not shared:
            continue
        table = [[0, 0], [0, 0]]
        for key in shared:
            i = DECIDED_LABELS.index(by_person[a][key])
            j = DECIDED_LABELS.index(by_person[b][key])
            table[i][j] += 1
        (pp, pf), (fp, ff) = table
        out.append(
            {"a": a, "b": b, **cohen_kappa(table, (f"{a}'s labels", f"{b}'s labels")).as_dict(),
             "confusion": {"pass": {"pass": pp, "fail": pf}, "fail": {"pass": fp, "fail": ff}}}
        )  # fmt: skip
    return out


def agreement_report(
    reader: RecordingReader, scorings: list[ScoringRecord], *, by: str | None = None
) -> dict[str, Any]:
    """Every scoring against its run's labels, ranked; raises :class:`NoLabelsError`."""
    per_run: dict[str, list[LabelRecord]] = {}
    for run_id in dict.fromkeys(s.run_id for s in scorings):
        per_run[run_id] = reader.labels(run_id)
    labels = [x for xs in per_run.values() for x in xs]
    if by is not None and not any(x.labeller == by for x in labels):
        raise NoLabelsError(f"no labels by {by!r} in run(s) {', '.join(per_run)}")
    if not labels:
        raise NoLabelsError(
            f"run(s) {', '.join(per_run)} have no labels yet: label sessions with "
            "`vae review RUN` or `vae label`"
        )
    entries, decided = [], []
    for scoring in scorings:
        names = {s.session_id: s.scenario_name for s in reader.sessions(scoring.run_id)}
        items = labelled_items(per_run[scoring.run_id], names, by)
        entry, pairs = scoring_agreement(reader, scoring, items)
        current = current_scoring(reader, scoring.run_id)
        entry["current"] = current is not None and current.scoring_id == scoring.scoring_id
        entries.append(entry)
        decided.append(pairs)
    common = _common(entries, decided)
    ranked = sorted(entries, key=_rank_key)
    return {
        "runs": list(per_run),
        "by": by,
        "labellers": sorted({x.labeller for x in labels}),
        "labels": len(labels),
        "scorings": entries,
        "common_items": common,
        "ranking": [e["scoring_id"] for e in ranked],
        "inter_annotator": [
            {"run_id": run_id, **pair}
            for run_id, xs in per_run.items()
            for pair in inter_annotator(xs)
        ],
    }
