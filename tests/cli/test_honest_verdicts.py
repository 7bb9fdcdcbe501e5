"""One row per failure kind of docs/scoring.md, each driven end to end through the CLI.

Real parts only: a real bridge on 127.0.0.1:0 with real gRPC test bots, a
real scorer service, the real ``openai`` client against a loopback judge or a
closed port, real SQLite files, a real ``vae run`` subprocess interrupted by
a real SIGINT, real NeMo result directories on disk. Each row asserts that
nothing in it reads as passed or completed, and that the exit code and the
output say what happened. (The undecodable-message and script-typo rows are
tested with the code that handles them: the Converse read loop and scenario
validation.)
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sqlite3
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from bridge_service.server import BridgeServer
from cli.main import vae
from recordings.models import SessionStatus
from recordings.reader import RecordingReader
from recordings.writer import open_writer
from scorer_service import ledger
from scorer_service.server import start_scorer
from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import scenario
from tests.factories import write_run
from tests.interop import nemo_fixture as fx
from tests.scorer_service.conftest import FakeJudge, standard_sessions
from vae.common.v1 import common_pb2

ROOT = Path(__file__).resolve().parents[2]
IMPORTED = "2024-06-01T10-22-33"
#: Every gating signal, so a judge signal that is not decided shows in the composite.
ALL_SIGNALS = {"*": {"success_signals": ["ACTION_MATCH", "NL_ASSERTION", "JUDGE_PASSED"]}}


async def cli(*args: str) -> tuple[int, str, str]:
    """`vae ...` in a worker thread (it runs its own event loop), as a user would."""
    result = await asyncio.to_thread(CliRunner().invoke, vae, list(args))
    return result.exit_code, result.stdout, result.stderr


async def until(check: Callable[[], bool], limit_s: float = 20.0) -> None:
    """Wait for an observable condition (polling the store), failing after ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.05)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def verdicts(reader: RecordingReader, scoring_id: str, signal: str) -> dict[str, str]:
    return {s.session_id: str(s.verdict) for s in reader.scores(scoring_id) if s.signal == signal}


# ---------------------------------------------------------------- the judge rows
async def judge_db(tmp_path: Path) -> tuple[Path, Path]:
    db = tmp_path / "judge.db"
    scenarios, sessions = standard_sessions()
    await write_run(db, scenarios, sessions)
    overrides = tmp_path / "gate-on-judge.json"
    overrides.write_text(json.dumps(ALL_SIGNALS))
    return db, overrides


async def row_judge_unreachable(tmp_path: Path, _bridge: BridgeServer) -> None:
    db, overrides = await judge_db(tmp_path)
    url = f"http://127.0.0.1:{closed_port()}/v1"
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


async def row_judge_garbage(tmp_path: Path, _bridge: BridgeServer) -> None:
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


async def row_no_judge_refused(tmp_path: Path, _bridge: BridgeServer) -> None:
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


async def row_no_judge_opted_out(tmp_path: Path, _bridge: BridgeServer) -> None:
    db, overrides = await judge_db(tmp_path)
    args = ["--run", "2024", "--db", str(db), "--overrides", str(overrides), "--no-judge"]
    code, out, err = await cli("rescore", *args)
    assert code == 1 and "(no_judge: 3)" in err
    assert "Success rate:      0.0%  (2 unscored, left out: no_judge: 3)" in out
    with RecordingReader(db) as reader:
        (scoring,) = reader.scorings()
        got = verdicts(reader, scoring.scoring_id, "is_successful")
        nl = verdicts(reader, scoring.scoring_id, "NL_ASSERTION")
    assert sorted(got.values()) == ["failed", "unscored", "unscored"]
    assert "passed" not in nl.values() and "not_applicable" not in nl.values()


async def row_rescore_killed(tmp_path: Path, _bridge: BridgeServer) -> None:
    db, overrides = await judge_db(tmp_path)
    judge = FakeJudge()
    judge.default = "hang"  # holds every request open until released
    judge.thread.start()
    proc = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "cli.main", "rescore", "--run", "2024", "--db", str(db)],
        *["--overrides", str(overrides), "--judge-base-url", judge.base_url],
        *["--judge-model", "m", "--judge-timeout", "60"],
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        await until(lambda: judge.requests > 0)
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


# ---------------------------------------------------------------- the bridge rows
async def linger(bot: TestBot) -> None:
    """Say a little, then stay on the line until the bridge ends the call."""
    await bot.speak(tone(0.3, 16000))
    await bot.ending.wait()


async def talk(bot: TestBot) -> None:
    await bot.speak(tone(0.3, 16000))
    if bot.role == common_pb2.ROLE_AGENT:
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)


def bots(address: str, run_id: str, behaviour: Any, pairs: int) -> list[TestBot]:
    return [
        TestBot(address, role, behaviour, run_filter=run_id)
        for _ in range(pairs)
        for role in (common_pb2.ROLE_USER, common_pb2.ROLE_AGENT)
    ]


async def row_ctrl_c_then_resume(tmp_path: Path, bridge: BridgeServer) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    for name in ("one", "two"):
        (suite / f"{name}.yaml").write_text(yaml.safe_dump(scenario(name)))
    run_id = "cut-off"
    lingering = bots(bridge.address, run_id, linger, 2)
    tasks = [asyncio.create_task(b.run()) for b in lingering]
    proc = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "cli.main", "run", str(suite), "--bridge", bridge.address],
        *["--run-id", run_id, "--concurrency", "2"],
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"},
    )
    try:

        def both_in_flight() -> bool:
            with RecordingReader(bridge.db_path) as reader:
                ids = reader.run_ids()
                sessions = reader.sessions(run_id) if run_id in ids else []
            return len([s for s in sessions if s.status is SessionStatus.RUNNING]) == 2

        await until(both_in_flight)
        proc.send_signal(signal.SIGINT)
        raw_out, raw_err = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    out, err = raw_out.decode(), raw_err.decode()
    await asyncio.wait_for(asyncio.gather(*tasks), 30)
    assert proc.returncode == 1
    assert f"interrupted: run {run_id} cancelled" in err
    assert f"vae run --resume {run_id}" in err and "completed" not in out + err
    with RecordingReader(bridge.db_path) as reader:
        run = reader.get_run(run_id)
        assert run is not None and run.status == "cancelled"
        assert {s.stop_reason for s in reader.sessions(run_id)} == {"cancelled"}
    # A rescore of the cut-off run decides nothing.
    code, out, err = await cli(
        "rescore", "--run", run_id, "--db", str(bridge.db_path), "--no-judge", "--json"
    )
    assert code == 1 and "unfinished: cancelled: 2" in err
    assert json.loads(out)["summary"]["success_rate"] is None
    code, out, _ = await cli("run", "--resume", run_id, "--check", "--bridge", bridge.address)
    assert code == 0 and out.count("in_flight") == 2 and "unfinished" in out
    assert "completed" not in out
    talking = bots(bridge.address, run_id, talk, 2)
    (code, out, err), *_ = await asyncio.gather(
        cli("run", "--resume", run_id, "--bridge", bridge.address, "--json"),
        *(b.run() for b in talking),
    )
    assert code == 0, err
    summary = json.loads(out)
    assert summary["status"] == "completed"
    with RecordingReader(bridge.db_path) as reader:
        rows = {(s.scenario_name, s.attempt): s for s in reader.sessions(run_id)}
    for name in ("one", "two"):
        assert rows[(name, 1)].status is SessionStatus.SUPERSEDED
        assert rows[(name, 1)].superseded_reason.startswith("resumed:")
        assert rows[(name, 2)].stop_reason == "end_tool"


async def row_ctrl_c_during_demo(tmp_path: Path, _bridge: BridgeServer) -> None:
    db = tmp_path / "demo.db"
    proc = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "cli.main", "demo", "--db", str(db)],
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )

    def in_flight() -> bool:
        if not db.exists():
            return False
        with sqlite3.connect(db) as raw:
            tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master")}
            if "sessions" not in tables:
                return False
            (n,) = raw.execute("SELECT count(*) FROM sessions WHERE status = 'running'").fetchone()
        return bool(n)

    try:
        await until(in_flight, 120)
        proc.send_signal(signal.SIGINT)
        raw_out, raw_err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    err = raw_err.decode()
    assert proc.returncode == 1 and "Success rate" not in raw_out.decode()
    with RecordingReader(db) as reader:
        (run,) = reader.list_runs()
        stops = {s.stop_reason for s in reader.sessions(run.run_id)}
    assert run.status == "cancelled", (run.status, run.error, err)
    assert stops <= {"cancelled", "end_tool", "user_hang_up"}
    assert "cancelled" in stops
    assert f"interrupted: run {run.run_id} cancelled" in err
    assert f"vae run --resume {run.run_id}" in err


async def row_missing_peer(tmp_path: Path, bridge: BridgeServer) -> None:
    path = tmp_path / "alone.yaml"
    path.write_text(yaml.safe_dump(scenario("alone")))
    run_id = "alone-run"
    user = TestBot(bridge.address, common_pb2.ROLE_USER, linger, run_filter=run_id)
    task = asyncio.create_task(user.run())
    try:
        code, out, _ = await cli(
            "run", str(path), "--bridge", bridge.address, "--run-id", run_id,
            "--pairing-timeout", "0.5", "--max-retries", "0",
        )  # fmt: skip
    finally:
        await user.hang_up_stream()
        await asyncio.wait_for(task, 15)
    assert code == 1
    assert "peer_never_joined" in out and "no agent bot joined within 0.5 s" in out
    assert f"run {run_id}: failed" in out and "completed" not in out
    with RecordingReader(bridge.db_path) as reader:
        run = reader.get_run(run_id)
        assert run is not None and run.status == "failed" and "alone" in run.error
    shown = await cli("runs", "show", run_id, "--db", str(bridge.db_path))
    assert shown[0] == 0 and "no agent bot joined within 0.5 s" in shown[1]


async def row_connector_refuses(tmp_path: Path, bridge: BridgeServer) -> None:
    from websockets.asyncio.server import serve
    from websockets.http11 import Response

    def refuse(_conn: Any, _request: Any) -> Response:
        return _conn.respond(503, "busy: one client at a time\n")  # type: ignore[no-any-return]

    path = tmp_path / "dial.yaml"
    path.write_text(yaml.safe_dump(scenario("dial")))
    async with serve(lambda _ws: asyncio.sleep(0), "127.0.0.1", 0, process_request=refuse) as srv:
        port = next(iter(srv.sockets)).getsockname()[1]
        for url, run_id in (
            (f"ws://127.0.0.1:{port}", "refused-busy"),
            (f"ws://127.0.0.1:{closed_port()}", "refused-closed"),
        ):
            code, out, err = await cli(
                "run", str(path), "--bridge", bridge.address, "--run-id", run_id,
                "--agent-connector", url, "--max-retries", "0", "--pairing-timeout", "0.5",
            )  # fmt: skip
            assert code == 1, err
            assert "connector_failed" in out and url in out
            assert f"run {run_id}: failed" in out and "completed" not in out
            with RecordingReader(bridge.db_path) as reader:
                (s,) = reader.sessions(run_id)
                assert s.stop_reason == "connector_failed" and s.clean_exit is False


# ---------------------------------------------------------------- the import rows
def results(tmp_path: Path) -> Path:
    return fx.build(tmp_path / "nemo")


async def import_and_rescore(
    tmp_path: Path, root: Path, *, expect_rescore: int = 1
) -> tuple[str, dict[str, Any]]:
    db = tmp_path / "import.db"
    code, out, err = await cli("import", "nemo", str(root), "--db", str(db))
    assert code == 0, err
    code, scored, err = await cli(
        "rescore", "--run", IMPORTED, "--db", str(db), "--no-judge", "--json"
    )
    assert code == expect_rescore, err
    return out, json.loads(scored)


def success_of(data: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {
        s["scenario_name"]: (v["verdict"], v["error"])
        for s in data["sessions"]
        for v in s["scores"]
        if v["signal"] == "is_successful"
    }


async def row_import_crashed(tmp_path: Path, _bridge: BridgeServer) -> None:
    out, data = await import_and_rescore(tmp_path, results(tmp_path))
    assert f"{fx.CRASHED}: #1 crashed" in out
    assert "crashed or unfinished" in out and "run: " in out
    assert success_of(data)[fx.CRASHED] == ("unscored", "unfinished: attempt_crashed")
    with RecordingReader(tmp_path / "import.db") as reader:
        run = reader.get_run(IMPORTED)
        assert run is not None and run.status == "failed"


async def row_import_killed(tmp_path: Path, _bridge: BridgeServer) -> None:
    root = results(tmp_path)
    # The pizza attempt would pass on its own, but it was killed mid-call.
    (root / fx.PIZZA / "__KILLED__").write_text("")
    out, data = await import_and_rescore(tmp_path, root)
    assert f"{fx.PIZZA}: #1 crashed" in out and "killed" in out
    assert success_of(data)[fx.PIZZA] == ("unscored", "unfinished: attempt_crashed")
    assert "passed" not in {v for v, _ in success_of(data).values()}


async def row_import_wrong_types(tmp_path: Path, _bridge: BridgeServer) -> None:
    root = results(tmp_path)
    metrics_path = root / fx.PIZZA / "metrics.json"
    metrics = json.loads(metrics_path.read_text())
    metrics.update(stop_reason=42, clean_exit="yes", judge_score="high", judge_passed=True)
    metrics_path.write_text(json.dumps(metrics))
    db = tmp_path / "import.db"
    code, out, err = await cli("import", "nemo", str(root), "--db", str(db))
    assert code == 0, err
    assert "metrics.json: stop_reason: expected a string, got int 42; ignored" in out
    assert "metrics.json: clean_exit: expected a boolean, got str 'yes'; ignored" in out
    assert "metrics.json: judge_score: expected a number, got str 'high'; ignored" in out
    with RecordingReader(db) as reader:
        session = reader.session(f"{IMPORTED}_{fx.PIZZA}_a1")
        assert session is not None and session.stop_reason != "bot_error"
        original = next(s for s in reader.scorings(IMPORTED))
        judged = [
            s for s in reader.scores(original.scoring_id, session.session_id)
            if s.signal == "JUDGE_PASSED"
        ]  # fmt: skip
        assert [s.value for s in judged] == [None]  # "high" never became a score


async def row_import_symlinks(tmp_path: Path, _bridge: BridgeServer) -> None:
    root = results(tmp_path)
    pizza = root / fx.PIZZA
    (pizza / "metrics.json").unlink()
    (pizza / "metrics.json").symlink_to("metrics.json")  # a loop onto itself
    context = pizza / "bot_logs_agent" / "llm_context.json"
    context.unlink(missing_ok=True)
    context.symlink_to("nowhere.json")  # dangling
    (pizza / "final_agent_response.json").unlink(missing_ok=True)
    (pizza / "final_agent_response.json").symlink_to("/dev/zero")  # leaves the directory
    os.mkfifo(pizza / "bridge_log.txt")  # a special file: reading it would hang
    outside = tmp_path / "elsewhere" / "stolen"
    outside.mkdir(parents=True)
    (outside / "metrics.json").write_text("{}")
    (root / "stolen").symlink_to(outside)  # a scenario directory outside the run
    (pizza / "bot_logs_user").rename(tmp_path / "elsewhere" / "logs")
    (pizza / "bot_logs_user").symlink_to(tmp_path / "elsewhere" / "logs")  # a parent dir
    out, data = await asyncio.wait_for(import_and_rescore(tmp_path, root), 60)
    for expected in (
        f"{fx.PIZZA}/metrics.json: symlink loop; not followed",
        f"{fx.PIZZA}/bot_logs_agent/llm_context.json: dangling symlink; not followed",
        f"{fx.PIZZA}/final_agent_response.json: symlink leaves the run directory; not followed",
        f"{fx.PIZZA}/bridge_log.txt: not a regular file (special file); not read",
        f"{fx.PIZZA}/bot_logs_user/llm_context.json: symlink leaves the run directory",
        "stolen: a symlinked directory; not followed",
    ):
        assert expected in out
    assert "stolen" not in {s["scenario_name"] for s in data["sessions"]}
    # Without its metrics the attempt cannot be known to have finished.
    assert success_of(data)[fx.PIZZA] == ("unscored", "unfinished: attempt_crashed")


Row = Callable[[Path, BridgeServer], Awaitable[None]]
ROWS: dict[str, Row] = {
    "judge unreachable": row_judge_unreachable,
    "judge answering garbage": row_judge_garbage,
    "no judge configured: refused": row_no_judge_refused,
    "no judge, opted out: unscored": row_no_judge_opted_out,
    "a rescore killed mid-scoring": row_rescore_killed,
    "Ctrl-C then resume": row_ctrl_c_then_resume,
    "Ctrl-C during vae demo": row_ctrl_c_during_demo,
    "a missing peer": row_missing_peer,
    "a connector that refuses": row_connector_refuses,
    "an imported attempt that crashed": row_import_crashed,
    "an imported attempt that was killed": row_import_killed,
    "wrong-typed NeMo fields": row_import_wrong_types,
    "symlinked and special NeMo files": row_import_symlinks,
}


@pytest.mark.parametrize("row", list(ROWS))
async def test_failure_row(row: str, tmp_path: Path, bridge: BridgeServer) -> None:
    await ROWS[row](tmp_path, bridge)
