"""The judge rows of the failure table: unreachable, garbage, none, opted out, killed."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
from pathlib import Path

from tests.cli.honest_common import ALL_SIGNALS, verdicts
from tests.factories import write_run
from tests.helpers import ROOT, cli, closed_port, wait_until
from tests.scorer_service.conftest import FakeJudge, standard_sessions
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.writer import open_writer
from vae.scorer_service.edge.server import start_scorer
from vae.scorer_service.ledger import scorings as ledger


async def judge_db(tmp_path: Path) -> tuple[Path, Path]:
    db = tmp_path / "judge.db"
    scenarios, sessions = standard_sessions()
    await write_run(db, scenarios, sessions)
    overrides = tmp_path / "gate-on-judge.json"
    overrides.write_text(json.dumps(ALL_SIGNALS))
    return db, overrides


async def row_judge_unreachable(tmp_path: Path) -> None:
    db, overrides = await judge_db(tmp_path)
    with closed_port() as port:
        url = f"http://127.0.0.1:{port}/v1"
        args = ["--run", "2024", "--judge-base-url", url, "--judge-model", "m"]
        code, out, err = await cli("rescore", *args, "--db", str(db), "--overrides", str(overrides))
        assert code == 1
        assert "cannot be used" in err and "recorded as failed" in err and "Success rate" not in out
        scorer = await start_scorer(db, "127.0.0.1:0")
        try:
            address = f"127.0.0.1:{scorer.port}"
            code, out, err = await cli(
                "rescore", *args, "--scorer", address, "--overrides", str(overrides)
            )
        finally:
            await scorer.stop(1.0)
    assert code == 1 and "FAILED_PRECONDITION" in err and "cannot be used" in err
    with RecordingReader(db) as reader:
        assert [s.status for s in reader.scorings()] == ["failed", "failed"]
        (run_id,) = reader.run_ids()
        assert ledger.current_scoring(reader, run_id) is None
        assert all(not reader.scores(s.scoring_id) for s in reader.scorings())


async def row_judge_garbage(tmp_path: Path) -> None:
    db, overrides = await judge_db(tmp_path)
    judge = FakeJudge()
    judge.default = "garbage"
    judge.thread.start()
    try:
        args = ["--run", "2024", "--db", str(db), "--overrides", str(overrides), "--json"]
        args += ["--judge-base-url", judge.base_url, "--judge-model", "m", "--judge-retries", "0"]
        code, out, err = await cli("rescore", *args)
        assert code == 1
        assert "3 session(s) have an unscored gating signal (judge_error: 3)" in err
        assert "--allow-unscored" in err
        data = json.loads(out)
        assert data["summary"]["unscored"]["causes"] == {"judge_error": 3}
        success = {
            s["scenario_name"]: v["verdict"]
            for s in data["sessions"]
            for v in s["scores"]
            if v["signal"] == "is_successful"
        }
        # book_wrong failed on evidence (its actions); nothing passed on a garbage judge.
        assert success == {"book_ok": "unscored", "book_wrong": "failed", "db_case": "unscored"}
        assert data["summary"]["success_rate"] == 0.0
        assert (await cli("rescore", *args, "--allow-unscored"))[0] == 0
    finally:
        judge.server.shutdown()
        judge.server.server_close()


async def row_no_judge_refused(tmp_path: Path) -> None:
    db, _ = await judge_db(tmp_path)
    code, out, err = await cli("rescore", "--run", "2024", "--db", str(db))
    assert code == 2 and out == ""
    assert "need a judge" in err and "book_ok" in err
    assert "--judge-base-url" in err and "--no-judge" in err
    scorer = await start_scorer(db, "127.0.0.1:0")
    try:  # the Rescore RPC refuses the same way (INVALID_ARGUMENT: a usage error)
        address = f"127.0.0.1:{scorer.port}"
        code, _, err = await cli("rescore", "--run", "2024", "--scorer", address)
    finally:
        await scorer.stop(1.0)
    assert code == 2 and "need a judge" in err and "config.no_judge" in err
    with RecordingReader(db) as reader:
        assert reader.scorings() == []


async def row_no_judge_opted_out(tmp_path: Path) -> None:
    db, overrides = await judge_db(tmp_path)
    args = ["--run", "2024", "--db", str(db), "--overrides", str(overrides), "--no-judge"]
    code, out, err = await cli("rescore", *args)
    assert code == 1 and "(no_judge: 3)" in err
    assert "Success rate:      0.0%  (0/1 decided, 2 unscored; left out: no_judge: 3)" in out
    with RecordingReader(db) as reader:
        (scoring,) = reader.scorings()
        got = verdicts(reader, scoring.scoring_id, "is_successful")
        nl = verdicts(reader, scoring.scoring_id, "NL_ASSERTION")
        judge = verdicts(reader, scoring.scoring_id, "JUDGE_PASSED")
    assert sorted(got.values()) == ["failed", "unscored", "unscored"]
    # Unscored where there are NL assertions to judge (book_ok); nothing to check elsewhere.
    assert sorted(nl.values()) == ["not_applicable", "not_applicable", "unscored"]
    assert set(judge.values()) == {"unscored"}


async def row_rescore_killed(tmp_path: Path) -> None:
    db, overrides = await judge_db(tmp_path)
    judge = FakeJudge()
    judge.default = "hang"  # holds every request open until released
    judge.thread.start()
    proc = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "vae.cli.main", "rescore", "--run", "2024", "--db", str(db)],
        *["--overrides", str(overrides), "--judge-base-url", judge.base_url],
        *["--judge-model", "m", "--judge-timeout", "60"],
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        await wait_until(lambda: judge.requests > 0, 20)
        with RecordingReader(db) as reader:
            assert [s.status for s in reader.scorings()] == ["running"]
        proc.kill()
        await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        judge.release.set()
        judge.server.shutdown()
        judge.server.server_close()
    code, out, _ = await cli("scores", "list", "--db", str(db))
    assert code == 0 and "interrupted" in out and "complete" not in out
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT status FROM scorings").fetchall() == [("running",)]
    async with open_writer(db):
        pass  # the store opened for writing marks what a dead process left running
    with sqlite3.connect(db) as raw:
        ((status, summary),) = raw.execute("SELECT status, summary_json FROM scorings")
    assert status == "interrupted" and "ended before the scoring finished" in summary
    with RecordingReader(db) as reader:
        (run_id,) = reader.run_ids()
        assert ledger.current_scoring(reader, run_id) is None
