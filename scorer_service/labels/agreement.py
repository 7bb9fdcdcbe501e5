"""Agreement between scorings and human labels: which judge to trust, and how far.

Why beside the comparison of scorings (:mod:`vae.scorer_service.ledger.scorings`): a judge
configuration is worth what its verdicts agree with people who listened to
the calls, and every scoring of a run can be held against the same labels.
Labels never change a scoring; this only reads both.

For one scoring, every labelled item (a session, a signal, an NL assertion)
pairs its label with the scoring's verdict on the same thing:

- the label is each labeller's latest; without ``by`` the labellers'
  consensus — their decided labels (pass/fail) when they all agree,
  ``unsure`` when nobody decided, ``split`` when they disagree;
- the verdict is ``is_successful`` for a session, the signal's verdict, or
  the NL assertion's row (matched by its text, else its index).

An item counts in ``n`` only when both sides decided (label pass/fail,
verdict passed/failed). Everything else is counted apart, once, label first:
``label can't tell``, ``labellers disagree``, ``unscored`` (with its
causes), ``not applicable``, ``not in this scoring`` — never as agreement.
Each row (all labels, the session, each signal, all NL assertions, each NL
assertion) gets n, percent agreement, Cohen's κ with its 95 % interval
(:mod:`vae.scorer_service.labels.kappa`) and the confusion matrix; disagreements are
listed with the judge's reason beside the label's note.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from vae.recordings.labels import LabelKind, LabelRecord, LabelVerdict
from vae.recordings.models import ScoringRecord, Verdict
from vae.recordings.read.reader import RecordingReader
from vae.recordings.trials import base_name
from vae.recordings.write.label_rows import latest_per_labeller
from vae.scorer_service import signals
from vae.scorer_service.labels.kappa import cohen_kappa
from vae.scorer_service.ledger.aggregate import SessionOutcome
from vae.scorer_service.ledger.reasons import reasons
from vae.scorer_service.ledger.scorings import session_outcomes

ALL = "all labels"
SESSION = "session (is_successful)"
NL_ALL = "NL assertions (all)"
SPLIT = "split"
DECIDED_LABELS = (LabelVerdict.PASS.value, LabelVerdict.FAIL.value)
DECIDED_VERDICTS = (Verdict.PASSED.value, Verdict.FAILED.value)
_AS_VERDICT = dict(zip(DECIDED_LABELS, DECIDED_VERDICTS, strict=True))


@dataclass(frozen=True)
class LabelledItem:
    """One labelled thing and the label that stands for it."""

    session_id: str
    scenario_name: str
    kind: LabelKind
    signal: str
    assertion: int
    assertion_text: str
    #: pass, fail, unsure, or split (labellers disagree).
    label: str
    #: The labellers' latest labels on it.
    labels: tuple[LabelRecord, ...]

    @property
    def key(self) -> tuple[str, str]:
        return (self.session_id, self.labels[0].item)  # labels share the item they were grouped by

    @property
    def name(self) -> str:
        if self.kind is LabelKind.SIGNAL:
            return self.signal
        if self.kind is LabelKind.ASSERTION:
            return f"NL #{self.assertion} “{self.assertion_text}”"
        return "session"

    def rows(self) -> list[str]:
        if self.kind is LabelKind.SIGNAL:
            return [ALL, self.signal]
        if self.kind is LabelKind.ASSERTION:
            own = f"NL “{self.assertion_text}” ({base_name(self.scenario_name)})"
            return [ALL, NL_ALL, own]
        return [ALL, SESSION]


def consensus(labels: Iterable[LabelRecord]) -> str:
    decided = {str(x.verdict) for x in labels if x.verdict is not LabelVerdict.UNSURE}
    if not decided:
        return LabelVerdict.UNSURE.value
    return decided.pop() if len(decided) == 1 else SPLIT


def labelled_items(
    labels: Sequence[LabelRecord], names: dict[str, str], by: str | None = None
) -> list[LabelledItem]:
    """The items of ``labels`` with their standing label (``by``: one labeller's only)."""
    grouped: dict[tuple[str, str], list[LabelRecord]] = {}
    for (sid, item, who), x in latest_per_labeller(labels).items():
        if by is None or who == by:
            grouped.setdefault((sid, item), []).append(x)
    out = []
    for (sid, _), xs in sorted(grouped.items()):
        first = xs[0]
        out.append(
            LabelledItem(sid, names.get(sid, sid), first.kind, first.signal, first.assertion,
                         first.assertion_text, consensus(xs), tuple(xs))
        )  # fmt: skip
    return out


@dataclass(frozen=True)
class Judged:
    verdict: str
    reason: str = ""
    cause: str = ""


def _score_reason(score: Any) -> str:
    return "; ".join(reasons(score)) or str(score.detail.get("reason") or "")


def _session_reason(outcome: SessionOutcome) -> str:
    why = [
        f"{name}: {(reasons(s) or [str(s.verdict)])[0]}"
        for name in (*signals.SUCCESS_SIGNALS, signals.STALLED)
        if (s := outcome.get(name)) is not None and s.verdict in (Verdict.FAILED, Verdict.UNSCORED)
    ]
    return "; ".join(why) or "every gating signal passed"


def judged(item: LabelledItem, outcome: SessionOutcome | None) -> Judged:
    """The scoring's verdict on ``item`` (``absent`` when the scoring has none)."""
    if outcome is None:
        return Judged("absent", "the scoring did not score this session")
    if item.kind is LabelKind.SESSION:
        name = signals.IS_SUCCESSFUL
    elif item.kind is LabelKind.SIGNAL:
        name = item.signal
    else:
        name = signals.NL_ASSERTION
    score = outcome.get(name)
    if score is None:
        return Judged("absent", f"the scoring has no {name}")
    reason = _session_reason(outcome) if item.kind is LabelKind.SESSION else _score_reason(score)
    cause = score.error.split(":", 1)[0] if score.error else ""
    found = score.detail.get("verdicts")
    rows = [r for r in found if isinstance(r, dict)] if isinstance(found, list) else []
    if item.kind is not LabelKind.ASSERTION or not rows:
        return Judged(str(score.verdict), reason, cause)
    row = next((r for r in rows if r.get("assertion") == item.assertion_text), None)
    if row is None and not item.assertion_text:
        row = next((r for r in rows if r.get("index") == item.assertion), None)
    if row is None:
        return Judged("absent", "the scoring did not judge this assertion")
    passed = row.get("passed")
    verdict = "passed" if passed is True else "failed" if passed is False else "unscored"
    unscored_cause = "" if passed is not None else cause or "no verdict"
    return Judged(verdict, str(row.get("reason") or ""), unscored_cause)


@dataclass
class Tally:
    """One row: the confusion matrix of decided pairs and what was counted apart."""

    name: str
    table: list[list[int]] = field(default_factory=lambda: [[0, 0], [0, 0]])
    apart: Counter[str] = field(default_factory=Counter)
    causes: Counter[str] = field(default_factory=Counter)

    def add(self, label: str, verdict: Judged) -> bool:
        """Count one pair; True when both sides decided (it is in n)."""
        if label == LabelVerdict.UNSURE.value:
            self.apart["label can't tell"] += 1
        elif label == SPLIT:
            self.apart["labellers disagree"] += 1
        elif verdict.verdict == Verdict.UNSCORED.value:
            self.apart["unscored"] += 1
            self.causes[verdict.cause or "unscored"] += 1
        elif verdict.verdict == Verdict.NOT_APPLICABLE.value:
            self.apart["not applicable"] += 1
        elif verdict.verdict not in DECIDED_VERDICTS:
            self.apart["not in this scoring"] += 1
        else:
            i, j = DECIDED_LABELS.index(label), DECIDED_VERDICTS.index(verdict.verdict)
            self.table[i][j] += 1
            return True
        return False

    def as_dict(self) -> dict[str, Any]:
        (pp, pf), (fp, ff) = self.table
        return {
            "row": self.name,
            **cohen_kappa(self.table).as_dict(),
            "confusion": {
                "pass": {"passed": pp, "failed": pf},
                "fail": {"passed": fp, "failed": ff},
            },
            "apart": dict(sorted(self.apart.items())),
            "unscored_causes": dict(sorted(self.causes.items())),
        }


def _row_order(name: str) -> tuple[int, str]:
    fixed = [ALL, SESSION, *signals.SUCCESS_SIGNALS, NL_ALL]
    return (fixed.index(name), "") if name in fixed else (len(fixed), name)


#: An item's identity across scorings: (session id, ``session`` / ``signal:X`` / ``assertion:N``).
ItemKey = tuple[str, str]
#: The decided pairs of one scoring: item -> (label, verdict).
Decided = dict[ItemKey, tuple[str, Judged]]


def scoring_agreement(
    reader: RecordingReader, scoring: ScoringRecord, items: Sequence[LabelledItem]
) -> tuple[dict[str, Any], Decided]:
    """Agreement of one scoring with ``items`` (its rows and disagreements), and the
    items both sides decided (to compare scorings on the same items)."""
    outcomes = {o.session_id: o for o in session_outcomes(reader, scoring)}
    tallies: dict[str, Tally] = {}
    disagreements = []
    pairs: Decided = {}
    for item in items:
        verdict = judged(item, outcomes.get(item.session_id))
        decided = False
        for row in item.rows():  # the same pair counts in every row it belongs to
            decided = tallies.setdefault(row, Tally(row)).add(item.label, verdict)
        if decided:
            pairs[item.key] = (item.label, verdict)
        if decided and _AS_VERDICT[item.label] != verdict.verdict:
            disagreements.append(
                {"session_id": item.session_id, "scenario": item.scenario_name,
                 "item": item.name, "label": item.label,
                 "labellers": [x.labeller for x in item.labels],
                 "notes": [{"by": x.labeller, "note": x.note} for x in item.labels if x.note],
                 "verdict": verdict.verdict, "reason": verdict.reason}
            )  # fmt: skip
    scope = scoring.summary.get("scope")
    judge = scoring.config.get("judge")
    return {
        "scoring_id": scoring.scoring_id,
        "run_id": scoring.run_id,
        "label": str(scoring.config.get("label") or ""),
        "judge_model": scoring.judge_model,
        "judge_threshold": judge.get("threshold")
        if scoring.judge_model and isinstance(judge, dict)
        else None,
        "subset": bool(isinstance(scope, dict) and scope.get("subset")),
        "coverage": {"decided": len(pairs), "labelled": len(items)},
        "rows": [tallies[name].as_dict() for name in sorted(tallies, key=_row_order)],
        "disagreements": disagreements,
    }, pairs
