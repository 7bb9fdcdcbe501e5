"""``vae label`` and ``vae labels import|export|list`` through the real CLI on a real store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.factories import write_run_sync
from tests.scorer_service.conftest import standard_sessions
from vae.cli.main import vae
from vae.recordings.read.reader import RecordingReader

RUN = "2024-06-01T10-00-00"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "vae.db"
    scenarios, sessions = standard_sessions()
    write_run_sync(path, scenarios, sessions)
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(vae, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def stored(db: Path) -> list[tuple[str, str, str, str]]:
    with RecordingReader(db) as reader:
        return [(x.item, str(x.verdict), x.labeller, x.note) for x in reader.labels(RUN)]


def test_label_a_session_a_signal_and_an_assertion(db: Path) -> None:
    d = ["--db", str(db)]
    code, out, _ = invoke("label", "2024", "book_wrong", "--verdict", "fail", "--note",
                          "party of 3, asked for 4", "--by", "ann", *d)  # fmt: skip
    assert code == 0 and out == "labelled book_wrong (session): fail by ann\n"
    with RecordingReader(db) as reader:
        sid = reader.latest_attempts(RUN)["book_ok"].session_id
    code, out, _ = invoke("label", RUN, sid, "--signal", "judge_passed", "--verdict", "pass",
                          "--by", "ann", "--json", *d)  # fmt: skip
    doc = json.loads(out)
    assert code == 0 and doc["item"] == "signal:JUDGE_PASSED" and doc["scenario"] == "book_ok"
    assert doc["at"].endswith("Z") and doc["by"] == "ann"
    code, out, _ = invoke("label", "2024", "book_ok", "--assertion", "0", "--verdict", "unsure",
                          "--json", "--by", "bob", *d)  # fmt: skip
    assert code == 0 and json.loads(out)["assertion_text"] == "The agent confirmed the booking"
    assert stored(db) == [
        ("session", "fail", "ann", "party of 3, asked for 4"),
        ("signal:JUDGE_PASSED", "pass", "ann", ""),
        ("assertion:0", "unsure", "bob", ""),
    ]
    code, out, _ = invoke("labels", "list", "2024", *d)
    assert code == 0 and "book_wrong" in out and "party of 3, asked for 4" in out
    assert [line[:1] for line in out.splitlines()[1:4]] == ["*", "*", "*"]
    code, out, _ = invoke("labels", "list", "2024", "--by", "bob", "--json", *d)
    (row,) = json.loads(out)
    assert row["assertion"] == 0 and row["latest"] is True and row["by"] == "bob"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["1999", "book_ok", "--verdict", "pass"], "no run matches '1999'"),
        (["2024", "nope", "--verdict", "pass"], "has no session or scenario 'nope'"),
        (["2024", "book_ok", "--verdict", "maybe"], "'maybe' is not one of"),
        (["2024", "book_ok", "--verdict", "pass", "--signal", "LOUDNESS"], "cannot be labelled"),
        (["2024", "book_ok", "--verdict", "pass", "--assertion", "3"], "1 NL assertion(s)"),
        (["2024", "book_wrong", "--verdict", "pass", "--assertion", "0"], "0 NL assertion(s)"),
        (
            ["2024", "book_ok", "--verdict", "pass", "--assertion", "0", "--signal", "CLEAN_EXIT"],
            "not both",
        ),
        (["2024", "book_ok", "--verdict", "pass", "--by", " "], "must not be empty"),
    ],
)
def test_bad_labels_are_usage_errors_and_write_nothing(
    db: Path, args: list[str], message: str
) -> None:
    code, _, err = invoke("label", *args, "--db", str(db))
    assert code == 2 and message in err and "Traceback" not in err
    assert stored(db) == []


def test_export_then_import_round_trips_in_both_formats(db: Path, tmp_path: Path) -> None:
    d = ["--db", str(db)]
    invoke("label", "2024", "book_wrong", "--verdict", "fail", "--note", 'says "party, 3"\nok',
           "--by", "ann", *d)  # fmt: skip
    invoke("label", "2024", "book_ok", "--assertion", "0", "--verdict", "pass", "--by", "bob", *d)
    code, csv_text, _ = invoke("labels", "export", "2024", *d)
    assert code == 0
    header, *rows = csv_text.splitlines()
    assert header == "run,session,scenario,signal,assertion,assertion_text,verdict,note,by,at"
    with RecordingReader(db) as reader:
        sid = reader.latest_attempts(RUN)["book_wrong"].session_id
    assert rows[0].startswith(f'{RUN},{sid},book_wrong,,,,fail,"says ""party, 3""')
    out = tmp_path / "labels.jsonl"
    assert invoke("labels", "export", "2024", "-o", str(out), *d)[0] == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["scenario"] for x in lines] == ["book_wrong", "book_ok"]
    # The same store: nothing new.
    code, out_text, _ = invoke("labels", "import", str(out), "--json", *d)
    assert code == 0 and json.loads(out_text) == {
        "file": str(out), "rows": 2, "imported": 0, "already_present": 2
    }  # fmt: skip
    # A copy of the run without labels: everything, exactly.
    fresh = tmp_path / "fresh.db"
    scenarios, sessions = standard_sessions()
    write_run_sync(fresh, scenarios, sessions)
    csv_file = tmp_path / "labels.csv"
    csv_file.write_text(csv_text)
    code, out_text, _ = invoke("labels", "import", str(csv_file), "--db", str(fresh))
    assert code == 0 and "imported 2 label(s)" in out_text
    with RecordingReader(db) as a, RecordingReader(fresh) as b:
        strip = [(x.session_id, x.item, x.verdict, x.note, x.labeller, x.created_ns,
                  x.assertion_text) for x in a.labels(RUN)]  # fmt: skip
        assert strip == [(x.session_id, x.item, x.verdict, x.note, x.labeller, x.created_ns,
                          x.assertion_text) for x in b.labels(RUN)]  # fmt: skip


BAD_CSV = """\
run,scenario,signal,verdict,note,by
2024,book_ok,,pass,fine,ann
2024,book_ok,,maybe,,ann
2024,no_such_scenario,,fail,,ann
2024,book_wrong,,fail,"a note, with a comma",ann,extra
2024,book_wrong,JUDGE_PASSED,fail,,ann
"""


def test_a_malformed_csv_is_refused_whole_with_its_line_numbers(db: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(BAD_CSV)
    code, _, err = invoke("labels", "import", str(bad), "--db", str(db))
    assert code == 2 and "nothing was imported" in err and "Traceback" not in err
    assert f"{bad}:3: verdict: 'maybe' is not one of" in err
    assert f"{bad}:4: session: run {RUN} has no session or scenario 'no_such_scenario'" in err
    assert f"{bad}:5: 7 fields, the header has 6" in err
    assert f"{bad}:2:" not in err and f"{bad}:6:" not in err, "good rows are not reported"
    assert stored(db) == [], "nothing imported, not even the good rows"


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("h.csv", "run,scenario,verdikt\n2024,book_ok,pass\n", ":1: unknown column 'verdikt'"),
        ("e.csv", "", ":1: the file is empty"),
        ("t.csv", "run,scenario,verdict,at\n2024,book_ok,pass,2024-06-01 10:00\n",
         ":2: at: '2024-06-01 10:00' is not an ISO 8601 time with a zone"),
        ("a.csv", "run,scenario,assertion,verdict\n2024,book_ok,x,pass\n",
         ":2: assertion: 'x' is not an assertion index"),
        ("s.csv", "run,session,scenario,verdict\n2024,SID,book_ok,pass\n",
         ":2: scenario: session SID is of scenario book_wrong, not book_ok"),
        ("n.jsonl", '{"scenario": "book_ok", "verdict": "pass"}\n',
         ":1: run: missing (add a run column or pass --run)"),
    ],
)  # fmt: skip
def test_bad_files_name_the_line(
    db: Path, tmp_path: Path, name: str, text: str, problem: str
) -> None:
    with RecordingReader(db) as reader:
        sid = reader.latest_attempts(RUN)["book_wrong"].session_id
    path = tmp_path / name
    path.write_text(text.replace("SID", sid))
    code, _, err = invoke("labels", "import", str(path), "--db", str(db))
    assert code == 2 and f"{path}{problem}".replace("SID", sid) in err
    assert stored(db) == []


def test_jsonl_problems_are_all_listed(db: Path, tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"run": "2024", "scenario": "book_ok", "verdict": "pass"}\n[1]\n{oops\n'
                    '{"scenario": "book_ok", "verdict": "pass", "colour": "red"}\n')  # fmt: skip
    code, _, err = invoke("labels", "import", str(path), "--db", str(db))
    assert code == 2 and f"{path}:2: expected a JSON object" in err
    assert f"{path}:3: not JSON" in err and f"{path}:4: unknown key 'colour'" in err


def test_import_with_run_and_by_defaults_and_an_unknown_format(db: Path, tmp_path: Path) -> None:
    path = tmp_path / "labels.txt"
    at = "2024-06-02T10:00:00+02:00"
    path.write_text(json.dumps({"scenario": "book_ok", "verdict": "pass", "at": at}) + "\n")
    code, _, err = invoke("labels", "import", str(path), "--db", str(db))
    assert code == 2 and "--format csv or jsonl" in err
    code, _, _ = invoke("labels", "import", str(path), "--format", "jsonl", "--run", "2024",
                        "--by", "carol", "--db", str(db))  # fmt: skip
    assert code == 0
    with RecordingReader(db) as reader:
        (x,) = reader.labels(RUN)
    assert x.labeller == "carol" and x.created_ns == 1_717_315_200 * 10**9
    other = tmp_path / "other.db"
    shutil.copy(db, other)
    assert invoke("labels", "export", "2024", "--db", str(other), "--format", "jsonl")[0] == 0
