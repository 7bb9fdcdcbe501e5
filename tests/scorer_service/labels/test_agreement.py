"""Agreement of scorings with labels: consensus, what is counted apart, the rows, the
disagreements with both sides' reasons, κ between labellers, and the ranking.

The run (``standard_sessions``) is scored twice: with no judge (every judge
signal unscored) and with a judge that passes everything. Labels by two people:

=============  ===================  =============================  ==========
scenario       session (ann / bob)  JUDGE_PASSED (ann)             NL #0 (ann)
=============  ===================  =============================  ==========
book_ok        pass / pass          pass                           pass
book_wrong     fail / pass (split)  fail ("party of 3")            -
db_case        fail / can't tell    -                              -
=============  ===================  =============================  ==========
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.factories import RunInfo
from tests.scorer_service.conftest import FakeJudge
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import JudgeSettings, ScoringConfig
from vae.scorer_service.labels.agreement_report import (
    NoLabelsError,
    agreement_report,
    resolve_scorings,
)
from vae.scorer_service.labels.labelling import make_label, store_labels
from vae.scorer_service.ledger.scorings import ScoringNotFoundError
from vae.scorer_service.scoring.rescore import rescore

RUN = "2024-06-01T10-00-00"


async def scored_and_labelled(db: Path, judge: FakeJudge) -> tuple[str, str]:
    no_judge = await rescore(db, RUN, ScoringConfig(no_judge=True, label="none"))
    settings = JudgeSettings(base_url=judge.base_url, model="m", max_retries=0)
    judged = await rescore(db, RUN, ScoringConfig(judge=settings, label="judge"))
    rows = [
        ("book_ok", "pass", "ann", {}), ("book_ok", "pass", "bob", {}),
        ("book_wrong", "fail", "ann", {}), ("book_wrong", "pass", "bob", {}),
        ("db_case", "fail", "ann", {}), ("db_case", "unsure", "bob", {}),
        ("book_ok", "pass", "ann", {"signal": "JUDGE_PASSED"}),
        ("book_wrong", "fail", "ann", {"signal": "JUDGE_PASSED", "note": "party of 3"}),
        ("book_ok", "pass", "ann", {"assertion": 0}),
    ]  # fmt: skip
    with RecordingReader(db) as reader:
        labels = [make_label(reader, RUN, name, verdict, by=who, at_ns=i + 1, **kw)  # type: ignore[arg-type]
                  for i, (name, verdict, who, kw) in enumerate(rows)]  # fmt: skip
    await store_labels(db, labels)
    return no_judge.scoring.scoring_id, judged.scoring.scoring_id


def row(entry: dict[str, object], name: str) -> dict[str, object]:
    return next(r for r in entry["rows"] if r["row"] == name)  # type: ignore[attr-defined, index]


async def test_rows_apart_and_disagreements(
    db_path: Path, recorded_run: RunInfo, fake_judge: FakeJudge
) -> None:
    none_id, judge_id = await scored_and_labelled(db_path, fake_judge)
    with RecordingReader(db_path) as reader:
        doc = agreement_report(reader, resolve_scorings(reader, [RUN]))
    assert [s["scoring_id"] for s in doc["scorings"]] == [none_id, judge_id]
    assert doc["labellers"] == ["ann", "bob"] and doc["labels"] == 9
    none, judged = doc["scorings"]
    # Sessions: book_ok pass/passed, db_case fail (bob can't tell)/failed, book_wrong split.
    session = row(judged, "session (is_successful)")
    assert session["n"] == 2 and session["kappa"] == pytest.approx(1.0)
    assert session["confusion"] == {"pass": {"passed": 1, "failed": 0},
                                    "fail": {"passed": 0, "failed": 1}}  # fmt: skip
    assert session["apart"] == {"labellers disagree": 1}
    # JUDGE_PASSED: the judge passed both: one class of verdicts, κ undefined, not 0.
    judge = row(judged, "JUDGE_PASSED")
    assert (judge["n"], judge["percent_agreement"], judge["kappa"]) == (2, 0.5, None)
    assert judge["kappa_undefined"] == "all verdicts are the same class"
    # All labels: [[3, 0], [1, 1]] -> p_o = .8, p_e = .6·.8 + .4·.2 = .56, κ = .24/.44
    every = row(judged, "all labels")
    assert every["n"] == 5 and every["kappa"] == pytest.approx(0.24 / 0.44)
    assert row(judged, "NL assertions (all)")["n"] == 1
    (wrong,) = judged["disagreements"]
    assert (wrong["scenario"], wrong["item"], wrong["label"], wrong["verdict"]) == (
        "book_wrong", "JUDGE_PASSED", "fail", "passed"
    )  # fmt: skip
    assert wrong["notes"] == [{"by": "ann", "note": "party of 3"}]
    assert "score 0.95" in wrong["reason"] and "synthetic" in wrong["reason"]
    # No judge: the judge's items are unscored, counted apart with their cause.
    apart = row(none, "all labels")
    assert apart["n"] == 2
    assert apart["apart"] == {"labellers disagree": 1, "unscored": 3}
    assert apart["unscored_causes"] == {"no_judge": 3}
    assert row(none, "JUDGE_PASSED")["kappa_undefined"] == "n = 0: nothing decided on both sides"
    # Ranking on the items both decided (the two sessions): a tie at κ = 1, so coverage
    # decides — leaving the judge's items unscored never ranks a scoring higher.
    assert doc["common_items"] == 2
    assert none["common"]["kappa"] == judged["common"]["kappa"] == pytest.approx(1.0)
    assert (none["coverage"], judged["coverage"]) == (
        {"decided": 2, "labelled": 6}, {"decided": 5, "labelled": 6}
    )  # fmt: skip
    assert doc["ranking"] == [judge_id, none_id]
    (pair,) = doc["inter_annotator"]
    # ann and bob both decided two sessions: book_ok (pass, pass), book_wrong (fail, pass).
    assert (pair["a"], pair["b"], pair["n"], pair["percent_agreement"]) == ("ann", "bob", 2, 0.5)
    assert (
        pair["kappa"] is None and pair["kappa_undefined"] == "all bob's labels are the same class"
    )


async def test_one_labeller_only(
    db_path: Path, recorded_run: RunInfo, fake_judge: FakeJudge
) -> None:
    _, judge_id = await scored_and_labelled(db_path, fake_judge)
    with RecordingReader(db_path) as reader:
        scorings = resolve_scorings(reader, [judge_id[:-2]])
        doc = agreement_report(reader, scorings, by="bob")
        with pytest.raises(NoLabelsError, match="no labels by 'carol'"):
            agreement_report(reader, scorings, by="carol")
    session = row(doc["scorings"][0], "session (is_successful)")
    # bob: book_ok pass/passed, book_wrong pass/failed, db_case can't tell.
    assert session["n"] == 2 and session["apart"] == {"label can't tell": 1}
    assert session["confusion"]["pass"] == {"passed": 1, "failed": 1}


async def test_no_labels_and_bad_references(db_path: Path, recorded_run: RunInfo) -> None:
    await rescore(db_path, RUN, ScoringConfig(no_judge=True))
    with RecordingReader(db_path) as reader:
        with pytest.raises(NoLabelsError, match="have no labels yet"):
            agreement_report(reader, resolve_scorings(reader, ["2024"]))
        with pytest.raises(ScoringNotFoundError, match="no scoring matches"):
            resolve_scorings(reader, ["1999"])
