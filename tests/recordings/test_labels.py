"""Labels in the store: migration 0010_labels, every label kept, duplicates a no-op, field rules."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from tests.factories import SessionSpec, conversation, scenario, write_run_sync
from vae.recordings.backends.connection import open_database
from vae.recordings.backends.migrations import MIGRATIONS, migrate
from vae.recordings.labels import (
    LabelError,
    LabelKind,
    LabelRecord,
    LabelVerdict,
    check_labeller,
    check_note,
    default_labeller,
    parse_verdict,
)
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.label_rows import latest_per_labeller
from vae.recordings.write.writer import open_writer

RUN = "2024-06-01T10-00-00"


def label(sid: str, verdict: str, who: str, at: int, **kw: object) -> LabelRecord:
    return LabelRecord(RUN, sid, kw.pop("kind", LabelKind.SESSION), LabelVerdict(verdict), who,  # type: ignore[arg-type]
                       at, **kw)  # type: ignore[arg-type]  # fmt: skip


async def add(db: Path, labels: list[LabelRecord]) -> None:
    async with open_writer(db) as writer:
        await writer.add_labels(labels)
        await writer.flush()


def test_a_file_from_before_labels_is_upgraded(db_path: Path) -> None:
    conn = sqlite3.connect(db_path, isolation_level=None)
    migrate(conn, target=[m.name for m in MIGRATIONS].index("0010_labels"))
    assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'labels'").fetchall()
    conn.close()
    conn = open_database(db_path)
    columns = [r[1] for r in conn.execute("PRAGMA table_info(labels)")]
    assert columns == ["id", "run_id", "session_id", "kind", "signal", "assertion",
                       "assertion_text", "verdict", "note", "labeller", "created_ns"]  # fmt: skip
    conn.close()


def test_every_label_is_kept_and_the_same_label_twice_is_stored_once(db_path: Path) -> None:
    info = write_run_sync(db_path, [scenario("a")], [SessionSpec("a", turns=conversation(1))])
    sid = info.session_ids["a"]
    first = label(sid, "pass", "ann", 10, note="ok")
    changed = label(sid, "fail", "ann", 20, note="missed the date")
    other = label(sid, "pass", "bob", 15)
    signal = label(sid, "fail", "ann", 12, kind=LabelKind.SIGNAL, signal="JUDGE_PASSED")
    nl = label(sid, "unsure", "ann", 13, kind=LabelKind.ASSERTION, assertion=0,
               assertion_text="says goodbye")  # fmt: skip
    asyncio.run(add(db_path, [first, changed, other, signal, nl]))
    asyncio.run(add(db_path, [first, changed]))  # an import of the same labels again
    with RecordingReader(db_path) as reader:
        stored = reader.labels(RUN)
        assert [(x.labeller, x.created_ns) for x in stored] == [
            ("ann", 10), ("ann", 12), ("ann", 13), ("bob", 15), ("ann", 20)
        ]  # fmt: skip
        assert [x.item for x in stored] == ["session", "signal:JUDGE_PASSED", "assertion:0",
                                            "session", "session"]  # fmt: skip
        assert reader.labels(RUN, labeller="bob") == [stored[3]]
        assert reader.labelled_runs() == [RUN]
    latest = latest_per_labeller(stored)
    assert latest[(sid, "session", "ann")].verdict is LabelVerdict.FAIL
    assert latest[(sid, "session", "bob")].verdict is LabelVerdict.PASS
    assert latest[(sid, "assertion:0", "ann")].assertion_text == "says goodbye"
    assert len(latest) == 4


@pytest.mark.parametrize(
    ("given", "expected"),
    [("pass", "pass"), (" FAIL ", "fail"), ("unsure", "unsure"), ("can't tell", "unsure")],
)
def test_verdicts(given: str, expected: str) -> None:
    assert parse_verdict(given) is LabelVerdict(expected)


@pytest.mark.parametrize("bad", ["maybe", "", 1, None, "passed"])
def test_bad_verdicts_name_the_field(bad: object) -> None:
    with pytest.raises(LabelError, match=r"verdict: .* is not one of pass, fail, unsure"):
        parse_verdict(bad)


def test_labeller_and_note_rules() -> None:
    assert check_labeller("  Ann Smith ") == "Ann Smith"
    for bad, why in (("", "must not be empty"), ("a" * 101, "at most 100"),
                     ("a\nb", "control"), (3, "must not be empty")):  # fmt: skip
        with pytest.raises(LabelError, match=why):
            check_labeller(bad)
    assert check_note("line one\nline two\ttab") == "line one\nline two\ttab"
    assert check_note(None) == ""
    for bad, why in (("x" * 4001, "at most 4000"), ("bell\x07", "control"), (5, "must be text")):
        with pytest.raises(LabelError, match=why):
            check_note(bad)
    assert default_labeller()
