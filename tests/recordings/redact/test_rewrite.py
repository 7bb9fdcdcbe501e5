"""``vae redact RUN``: into a new store or in place, nothing of the original left anywhere.

A run imported as it was (with a judge scoring whose cache holds the
conversation) is redacted; then the bytes of the database file and its WAL,
an export, a report and the judge cache are searched for every value.
Redacting again changes nothing; bad input changes nothing either.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.helpers import cli
from tests.redaction_calls import NEEDLES, caller_lines, scan, write_call
from vae.bots.stand_in.offline_judge import MODEL, offline_judge_server
from vae.recordings.read.reader import RecordingReader
from vae.recordings.redact import ledger

SCENARIO = {"domain": "bank", "nl_assertions": ['The agent says "thank you"'],
            "success_signals": ["NL_ASSERTION"]}  # fmt: skip


def _files(db: Path) -> list[Path]:
    return [db, Path(f"{db}-wal"), Path(f"{db}-shm")]


def _digest(db: Path) -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in _files(db) if p.exists())).hexdigest()


def _agent_span_heard(db: Path, text: str) -> None:
    """An agent's STT span (OTLP in) whose attributes hold what the caller said."""
    with sqlite3.connect(db) as conn:
        (session_id,) = conn.execute("SELECT session_id FROM sessions LIMIT 1").fetchone()
        conn.execute(
            "INSERT INTO agent_spans (run_id, session_id, trace_id, span_id, name, start_ns,"
            " end_ns, attributes_json, matched_by, received_ns)"
            " VALUES ('june', ?, ?, ?, 'stt', 1, 2, ?, 'trace_context', 3)",
            (session_id, "1" * 32, "2" * 16, json.dumps({"transcript": text})),
        )
    conn.close()


@pytest.fixture(scope="module")
def calls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("calls")
    write_call(folder, "written", caller_lines("written"))
    write_call(folder, "spoken", caller_lines("spoken"), words=False)
    (folder / "bank.json").write_text(json.dumps(SCENARIO))
    return folder


@pytest.fixture(scope="module")
def judge() -> Iterator[str]:
    with offline_judge_server() as server:
        yield server.base_url


async def _imported_and_judged(calls: Path, db: str, judge: str) -> None:
    code, _, err = await cli("import", "calls", str(calls / "written.wav"),
                             str(calls / "spoken.wav"), "--scenario", str(calls / "bank.json"),
                             "--db", db, "--run-id", "june")  # fmt: skip
    assert code == 0, err
    code, _, err = await cli("rescore", "--run", "june", "--db", db, "--judge-base-url", judge,
                             "--judge-model", MODEL, "--judge-include-conversation",
                             "--allow-unscored", "--json")  # fmt: skip
    assert code == 0, err


async def test_in_place_leaves_nothing_in_the_file_wal_cache_export_or_report(
    calls: Path, judge: str, tmp_path: Path
) -> None:
    db = tmp_path / "vae.db"
    await _imported_and_judged(calls, str(db), judge)
    _agent_span_heard(db, "my card is 4111 1111 1111 1111")
    # The values are there before (in events, audio's transcripts, the judge's cache, a span).
    assert set(scan(_files(db))) == set(NEEDLES)
    code, out, err = await cli("redact", "june", "--db", str(db), "--in-place", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["mode"] == "in-place" and result["purged_cache_rows"] >= 1
    assert result["summary"]["whole_turns"] >= 8  # the spoken call has no word timings
    assert scan(_files(db)) == {}
    wal = Path(f"{db}-wal")  # checkpointed and truncated (removed once the last one closed)
    assert not wal.exists() or wal.stat().st_size == 0  # noqa: ASYNC240
    with RecordingReader(db) as reader:
        assert not [k for k, in reader.conn.execute("SELECT request_json FROM judge_cache")
                    if "4111" in k]  # fmt: skip
        entries = ledger.entries(reader.conn, "june")
        assert {e.entity for e in entries} == set(NEEDLES)
        assert {e.method for e in entries if e.location == "audio"} == {"words", "turn"}
    out_dir = tmp_path / "export"
    code, _, err = await cli("export", "june", "--db", str(db), "-o", str(out_dir))
    assert code == 0, err
    report = tmp_path / "report.html"
    code, _, err = await cli("report", "june", "--db", str(db), "-o", str(report))
    assert code == 0, err
    exported = [p for p in out_dir.rglob("*") if p.is_file()]
    assert exported and scan([*exported, report]) == {}
    html = report.read_text()
    assert 'id="redaction"' in html and "&lt;CREDIT_CARD&gt;" in html and "whole turn" in html
    # Again with the same configuration: nothing to do, not a byte changed.
    before = _digest(db)
    code, out, _ = await cli("redact", "june", "--db", str(db), "--in-place")
    assert code == 0 and "nothing changed" in out
    assert _digest(db) == before
    # A rescore of the redacted run works and says it was judged on redacted text.
    code, out, err = await cli("rescore", "--run", "june", "--db", str(db), "--judge-base-url",
                               judge, "--judge-model", MODEL, "--judge-include-conversation",
                               "--allow-unscored", "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["redaction"]["judged_on_redacted_text"] is True
    assert scan(_files(db)) == {}


async def test_copy_keeps_the_source_and_bad_input_touches_nothing(
    calls: Path, judge: str, tmp_path: Path
) -> None:
    db = tmp_path / "vae.db"
    await _imported_and_judged(calls, str(db), judge)
    before = _digest(db)
    bad = tmp_path / "bad.yaml"
    for text, message in (("entities: [CREDIT_CARD, CARD_NUMBER]\n", "unknown value"),
                          ("entities: [CREDIT_CARD\n", "not valid YAML")):  # fmt: skip
        bad.write_text(text)
        code, _, err = await cli("redact", "june", "--db", str(db), "--in-place",
                                 "--redact-config", str(bad))  # fmt: skip
        assert code == 2 and message in err, err
    code, _, err = await cli("redact", "june", "--db", str(db))
    assert code == 2 and "--in-place" in err
    assert _digest(db) == before
    new = tmp_path / "redacted.db"
    code, out, err = await cli("redact", "june", "--db", str(db), "--out", str(new))
    assert code == 0, err
    assert _digest(db) == before and set(scan(_files(db))) == set(NEEDLES)
    assert scan(_files(new)) == {}
    # The new store has no judge cache of the original (nothing is copied from it).
    with RecordingReader(new) as reader:
        assert reader.conn.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0] == 0
        scoring = reader.conn.execute("SELECT summary_json FROM scorings").fetchone()[0]
        assert json.loads(scoring)["redaction"]["judged_on_redacted_text"] is False
    code, out, _ = await cli("redact", "june", "--db", str(db), "--out", str(new))
    assert code == 0 and "nothing changed" in out


async def test_postgresql_rows_are_redacted_and_vacuumed(calls: Path, pg_url: str) -> None:
    folder = calls.parent / "pg-calls"
    if not folder.exists():
        folder.mkdir()
        for name in ("written.wav", "written.transcript.json"):
            shutil.copy(calls / name, folder / name)
    code, _, err = await cli("import", "calls", str(folder), "--db", pg_url, "--run-id", "june")
    assert code == 0, err
    code, out, err = await cli("redact", "june", "--db", pg_url, "--in-place", "--json")
    assert code == 0, err
    storage = json.loads(out)["storage"]
    assert any(line.startswith("postgresql: VACUUM FULL events") for line in storage), storage

    def dump() -> str:
        with psycopg.connect(pg_url) as conn:
            tables = [r[0] for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]  # fmt: skip
            return "\n".join(str(row) for t in tables
                             for row in conn.execute(f"SELECT * FROM {t}"))  # fmt: skip

    text = await asyncio.to_thread(dump)
    found = [n for needles in NEEDLES.values() for n in needles if n.decode() in text]
    assert found == []
    assert "<CREDIT_CARD>" in text


async def test_a_value_the_transcription_stage_heard_is_masked_over_its_turn(
    tmp_path: Path,
) -> None:
    """A call whose bots reported nothing: what a scoring's transcription heard places it."""
    import numpy as np

    from tests.factories import SessionSpec, Turn, scenario, write_run
    from vae.recordings.models import Channel, ScoringRecord, TranscriptRecord
    from vae.recordings.redact.rewrite import rewrite_run
    from vae.recordings.write.writer import open_writer
    from vae.redaction.redactor import make_redactor

    db, out = tmp_path / "vae.db", tmp_path / "out.db"
    spec = SessionSpec("call", turns=[Turn("agent", 0.5, 1.5, ""), Turn("user", 2.0, 4.0, "")])
    info = await write_run(db, [scenario("call")], [spec], run_id="heard")
    sid = info.session_ids["call"]
    async with open_writer(db) as writer:
        await writer.create_scoring(ScoringRecord("heard.s1", "heard", 1, "complete", {}))
        await writer.add_transcripts([
            TranscriptRecord("heard.s1", sid, "agent", 0, 0.5, 1.5, "how can I help"),
            TranscriptRecord("heard.s1", sid, "user", 0, 2.0, 4.0,
                             "my card is four one one one one one one one one one one one one"
                             " one one one"),
        ])  # fmt: skip
        await writer.flush()
    result = await asyncio.to_thread(rewrite_run, db, "heard", make_redactor(), dest=out)
    assert result.summary["audio"] == {"CREDIT_CARD": 1}
    with RecordingReader(out) as reader:
        (text,) = [r[0] for r in reader.conn.execute(
            "SELECT text FROM transcripts WHERE channel = 'user'")]  # fmt: skip
        user = reader.read_channel(sid, Channel.USER).samples
        agent = reader.read_channel(sid, Channel.AGENT).samples
        (entry,) = [e for e in ledger.entries(reader.conn, "heard") if e.location == "audio"]
    assert text == "my card is <CREDIT_CARD>"
    assert (entry.channel, entry.method) == ("user", "turn")
    rate = 16000
    turn = user[int(2.2 * rate) : int(3.8 * rate)].astype(float)
    peak = np.argmax(np.abs(np.fft.rfft(turn * np.hanning(len(turn))))) * rate / len(turn)
    assert abs(peak - 1000) < 15  # the caller's turn is the tone; the agent's is as recorded
    agent_turn = agent[int(0.7 * rate) : int(1.3 * rate)].astype(float)
    assert abs(np.argmax(np.abs(np.fft.rfft(agent_turn))) * rate / len(agent_turn) - 220) < 5
