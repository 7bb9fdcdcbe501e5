"""``vae scores agree`` on the demo's run: the stand-in judge against a worse configuration.

The demo records part of the example suite with the reference bots and scores
it with the stand-in judge. A second scoring asks the same judge with a
threshold of 0.5: its JUDGE_PASSED now passes ``airline_wrong_date`` (score
0.67), which a person who listened says failed. Labels are what such a person
gives — the suite's own tags (``expect-pass`` / ``expect-fail``) for the
session and for JUDGE_PASSED — imported from a CSV file. ``vae scores agree``
must rank the stand-in judge first.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from vae.bots.stand_in.offline_judge import MODEL, offline_judge_server
from vae.cli.main import vae

SUITE = Path(__file__).resolve().parents[3] / "examples" / "suite"
NAMES = [
    "restaurant_book_table",  # passes
    "restaurant_cancel_booking",  # passes
    "airline_wrong_date",  # fails: wrong date; the stand-in judge scores it 0.67
    "restaurant_stalled_agent",  # fails: stalled; judge score 0
    "retail_refund_promise",  # fails an NL assertion; judge score 1.0 (no reference)
]


def invoke(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(vae, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.stdout


def expected(name: str) -> str:
    tags = yaml.safe_load((SUITE / f"{name}.yaml").read_text())["tags"]
    return "pass" if "expect-pass" in tags else "fail"


@pytest.mark.timeout(300)
def test_agree_ranks_the_stand_in_judge_above_a_worse_threshold(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    for name in NAMES:
        shutil.copy(SUITE / f"{name}.yaml", folder)
    db = tmp_path / "demo.db"
    d = ["--db", str(db)]
    demo = json.loads(invoke("demo", "--suite", str(folder), "--tts", "buzz", "--json", *d))
    run_id, stand_in = demo["run_id"], demo["scoring_id"]
    with offline_judge_server() as judge:
        args = ["--judge-base-url", judge.base_url, "--judge-model", MODEL]
        args += ["--judge-threshold", "0.5", "--label", "worse", "--json"]
        worse = json.loads(invoke("rescore", "--run", run_id, *args, *d))["scoring_id"]
    labels = tmp_path / "labels.csv"
    with labels.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["scenario", "signal", "verdict", "note"])
        for name in NAMES:
            out.writerow([name, "", expected(name), ""])
            note = "booked the 21st, asked for the 20th" if name == "airline_wrong_date" else ""
            out.writerow([name, "JUDGE_PASSED", expected(name), note])
    imported = json.loads(invoke("labels", "import", str(labels), "--run", run_id, "--by",
                                 "tester", "--json", *d))  # fmt: skip
    assert imported["imported"] == 2 * len(NAMES)

    doc = json.loads(invoke("scores", "agree", run_id, "--json", *d))
    assert doc["ranking"] == [stand_in, worse]
    by_id = {s["scoring_id"]: s for s in doc["scorings"]}
    good, bad = by_id[stand_in], by_id[worse]

    def judge_row(entry: dict[str, object]) -> dict[str, object]:
        return next(r for r in entry["rows"] if r["row"] == "JUDGE_PASSED")  # type: ignore[attr-defined, index]

    # Stand-in: passes the two passing calls, fails wrong_date and stalled, passes
    # refund_promise (nothing in its rule catches it): [[2, 0], [1, 2]].
    assert judge_row(good)["confusion"] == {"pass": {"passed": 2, "failed": 0},
                                            "fail": {"passed": 1, "failed": 2}}  # fmt: skip
    # p_o = .8, p_e = .4·.6 + .6·.4 = .48: κ = .32/.52
    assert judge_row(good)["kappa"] == pytest.approx(0.32 / 0.52)
    # Threshold 0.5 flips wrong_date to passed: [[2, 0], [2, 1]], p_e = .4·.8 + .6·.2 = .44
    assert judge_row(bad)["kappa"] == pytest.approx(0.16 / 0.56)
    assert doc["common_items"] == 2 * len(NAMES)
    # All items: [[4, 0], [1, 5]] -> κ .8;  [[4, 0], [2, 4]] -> κ .32/.52
    assert good["common"]["kappa"] == pytest.approx(0.8)
    assert bad["common"]["kappa"] == pytest.approx(0.32 / 0.52)
    flipped = [x for x in bad["disagreements"] if x["scenario"] == "airline_wrong_date"]
    assert flipped and flipped[0]["reason"].startswith("score 0.67 (threshold 0.5)")
    assert flipped[0]["notes"] == [{"by": "tester", "note": "booked the 21st, asked for the 20th"}]

    text = invoke("scores", "agree", stand_in, worse, *d)
    assert f"A: {stand_in}, “vae demo (offline stand-in judge)”" in text
    assert re.search(r"Ranking on the 10 item\(s\) every scoring decided .*: A \(κ 0\.80 ", text)
    assert "> B (κ 0.62" in text
    assert re.search(
        r"airline_wrong_date\s+JUDGE_PASSED\s+fail \(tester\)\s+tester: booked the 21st.*\s+"
        r"passed\s+score 0\.67 \(threshold 0\.5\)",
        text,
    )


def test_no_labels_is_a_failure_and_a_bad_reference_a_usage_error(tmp_path: Path) -> None:
    from tests.factories import write_run_sync
    from tests.scorer_service.conftest import standard_sessions

    db = tmp_path / "vae.db"
    write_run_sync(db, *standard_sessions())
    d = ["--db", str(db)]
    invoke("rescore", "--run", "2024", "--no-judge", "--allow-unscored", *d)
    result = CliRunner().invoke(vae, ["scores", "agree", "2024", *d])
    assert result.exit_code == 1 and "have no labels yet" in result.stderr
    result = CliRunner().invoke(vae, ["scores", "agree", "1999", *d])
    assert result.exit_code == 2 and "no scoring matches '1999'" in result.stderr
    invoke("label", "2024", "book_wrong", "--verdict", "fail", "--by", "ann", *d)
    doc = json.loads(invoke("scores", "agree", "2024", "--json", *d))
    (entry,) = doc["scorings"]
    assert entry["current"] is True and doc["ranking"] == [entry["scoring_id"]]
    session = next(r for r in entry["rows"] if r["row"] == "session (is_successful)")
    assert session["n"] == 1 and session["kappa"] is None
    assert session["kappa_undefined"] == "a single class on both sides"
    text = invoke("scores", "agree", "2024", *d)
    assert "undefined (a single class on both sides)" in text
