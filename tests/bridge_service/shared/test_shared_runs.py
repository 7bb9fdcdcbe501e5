"""Several bridges on one PostgreSQL store serve one run, as users run them.

Two real ``vae bridge serve --share-runs`` processes on one database (the
test's own PostgreSQL server), each with its own reference bots (``vae bot
user`` and ``vae bot agent``, two conversations at once each), and ``vae
run`` started at the first bridge:

- the example suite completes; every scenario is recorded exactly once; both
  bridges recorded sessions (the identity each attempt carries), and the run
  at the first bridge saw every session, wherever it was served;
- the second bridge killed with SIGKILL while it serves sessions: the first
  gives them up within the lease (``bridge_lost``, naming the dead bridge),
  retries them with its own bots, and the run completes; stopped with
  SIGTERM instead, the second ends them ``bridge_lost`` itself, and the same;
- Ctrl-C on ``vae run`` at the first bridge cancels the sessions the second
  one serves;
- the second bridge frozen (SIGSTOP) past the lease, then woken: its
  attempts were retried at the first, and what it records once awake is kept
  superseded, never a second result for a scenario;
- an attempt no bridge has bots for is recorded ``peer_never_joined``;
- ``--share-runs`` on an SQLite file is refused with a usage error.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT, wait_until
from vae.recordings.read.reader import RecordingReader

SUITE = ROOT / "examples" / "suite"


async def spawn(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vae.cli.main", *args,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


async def start_shared_bridge(url: str, *extra: str) -> tuple[asyncio.subprocess.Process, str]:
    bridge = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vae.cli.main", "bridge", "serve", "--address", "127.0.0.1:0",
        "--db", url, "--share-runs", "--log-level", "warning", "--final-state-timeout", "2",
        *extra,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert bridge.stdout is not None
    line = await asyncio.wait_for(bridge.stdout.readline(), 30)
    assert line.startswith(b"vae bridge listening on "), line
    if "--workers" in extra:
        await asyncio.wait_for(bridge.stdout.readline(), 10)  # "and N worker processes …"
    shared = await asyncio.wait_for(bridge.stdout.readline(), 10)
    assert b"sharing runs" in shared, shared
    return bridge, line.decode().rsplit(" ", 1)[1].strip()


async def start_bots(address: str, concurrency: int = 2) -> list[asyncio.subprocess.Process]:
    return [
        await spawn("bot", role, "--bridge", address, "--concurrency", str(concurrency))
        for role in ("user", "agent")
    ]


async def stop(procs: list[asyncio.subprocess.Process]) -> None:
    for proc in procs:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        _out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert b"Traceback" not in (err or b""), err.decode()[-3000:]


def live_at(url: str, address: str) -> int:
    """Sessions running at the bridge on ``address`` whose audio is being recorded."""
    with RecordingReader(url) as reader:
        return sum(
            1
            for run_id in reader.run_ids()
            for s in reader.sessions(run_id)
            if str(s.status) == "running"
            and reader.session_bridges(run_id).get(s.session_id, {}).get("address") == address
            and reader.channel_rates(s.session_id)
        )


def jobs_left(url: str) -> int:
    with RecordingReader(url) as reader:
        return int(reader.conn.execute("SELECT COUNT(*) FROM session_jobs").fetchone()[0])


@pytest.mark.timeout(420)
async def test_two_bridges_on_one_database_serve_one_run(pg_url: str) -> None:
    expected = len(list(SUITE.glob("*.yaml")))
    first, at_first = await start_shared_bridge(pg_url)
    # The second one with a worker per core: what it claims runs at its workers.
    second, at_second = await start_shared_bridge(pg_url, "--workers", "2")
    bots = [*await start_bots(at_first), *await start_bots(at_second)]
    try:
        # On the virtual clock: what is shared (the queue, the claims, the identities, the
        # recordings) is the same as on wall time, in a fraction of it; the tests below that
        # kill, stop or freeze a bridge mid-session keep wall time.
        run = await spawn("run", str(SUITE), "--bridge", at_first, "--concurrency", "4",
                          "--clock", "virtual", "--json")  # fmt: skip
        out, err = await asyncio.wait_for(run.communicate(), 300)
        assert run.returncode == 0, err.decode()[-3000:]
        doc: dict[str, Any] = json.loads(out)
        shown = await spawn("runs", "show", doc["run_id"], "--db", pg_url, "--json")
        shown_out, _ = await asyncio.wait_for(shown.communicate(), 60)
    finally:
        await stop(bots)
        await stop([first, second])
    assert doc["status"] == "completed" and doc["scenarios_done"] == expected, doc["error"]
    sessions = doc["sessions"]
    # Every scenario recorded exactly once: no attempt ran twice, none was retried.
    assert sorted(s["scenario"] for s in sessions) == sorted(p.stem for p in SUITE.glob("*.yaml"))
    assert len({s["session_id"] for s in sessions}) == expected
    served = {s["session_id"]: s["bridge"] for s in sessions}
    bridges = {b["front_door"] or b["address"] for b in served.values()}
    assert bridges == {at_first, at_second}, "both bridges recorded sessions"
    at_workers = [b for b in served.values() if b["front_door"] == at_second]
    assert at_workers and all(b["worker"] in (1, 2) for b in at_workers)
    assert all(b["worker"] is None for b in served.values() if b["address"] == at_first)
    in_store = {s["session_id"]: s["bridge"] for s in json.loads(shown_out)["sessions"]}
    assert in_store == served
    with RecordingReader(pg_url) as reader:
        for s in reader.sessions(doc["run_id"]):
            assert len(reader.channel_rates(s.session_id)) == 4, s.session_id
            assert reader.session_mode(s.session_id).clock == "virtual", s.session_id
    assert jobs_left(pg_url) == 0


@pytest.mark.timeout(420)
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["killed", "stopped"])
async def test_a_bridge_killed_or_stopped_mid_session_its_sessions_are_retried_at_the_other(
    pg_url: str, how: signal.Signals
) -> None:
    scenarios = sorted(SUITE.glob("*.yaml"))[:3]
    first, at_first = await start_shared_bridge(pg_url)
    second, at_second = await start_shared_bridge(pg_url)
    # Only the second bridge has bots at first: it takes the run's sessions.
    second_bots = await start_bots(at_second, 3)
    first_bots: list[asyncio.subprocess.Process] = []
    try:
        run = await spawn("run", *map(str, scenarios), "--bridge", at_first, "--concurrency", "3",
                          "--retry-backoff", "0.5", "--json")  # fmt: skip
        await wait_until(lambda: live_at(pg_url, at_second) >= 1, 90,
                         "a live session at the second bridge", alive=[first, second])  # fmt: skip
        second.send_signal(how)
        code = await asyncio.wait_for(second.wait(), 60)
        assert code == (0 if how is signal.SIGTERM else -signal.SIGKILL)
        first_bots = await start_bots(at_first, 3)
        out, err = await asyncio.wait_for(run.communicate(), 240)
        assert run.returncode == 0, err.decode()[-3000:]
        doc: dict[str, Any] = json.loads(out)
    finally:
        await stop([*first_bots, *second_bots])
        await stop([first])
    assert doc["status"] == "completed" and doc["scenarios_done"] == len(scenarios)
    lost = [s for s in doc["sessions"] if s["stop_reason"] == "bridge_lost"]
    assert lost, "the killed bridge held sessions"
    for s in lost:
        assert s["bridge"]["address"] == at_second and s["status"] == "superseded"
        assert at_second in s["stop_detail"]
        # Killed: the run's bridge gave it up after the lease; stopped: the bridge said so.
        said = "beat nothing for" if how is signal.SIGKILL else "shut down"
        assert said in s["stop_detail"], s["stop_detail"]
    latest = [s for s in doc["sessions"] if s["status"] != "superseded"]
    assert len(latest) == len(scenarios)
    assert all(s["bridge"]["address"] == at_first for s in latest)
    assert all(s["stop_reason"] in ("end_tool", "user_hang_up") for s in latest)
    retried = [s for s in latest if s["retry_reason"].startswith("bridge_lost")]
    assert len(retried) == len(lost)


@pytest.mark.parametrize("way", ["flag", "env"])
async def test_share_runs_on_sqlite_is_refused(tmp_path: Path, way: str) -> None:
    db = tmp_path / "vae.db"
    args = ["bridge", "serve", "--address", "127.0.0.1:0", "--db", str(db)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if way == "flag":
        args.append("--share-runs")
    else:
        env["VAE_SHARE_RUNS"] = "1"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vae.cli.main", *args, cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2, err.decode()
    assert b"--share-runs" in err and b"PostgreSQL" in err and b"Traceback" not in err
    assert not db.exists(), "nothing was created"


@pytest.mark.timeout(300)
async def test_ctrl_c_at_the_runs_bridge_cancels_its_sessions_at_the_other(pg_url: str) -> None:
    """CancelRun reaches sessions another bridge serves (through the store, at its next beat)."""
    scenarios = sorted(SUITE.glob("airline_*.yaml"))[:2]
    first, at_first = await start_shared_bridge(pg_url)
    second, at_second = await start_shared_bridge(pg_url)
    bots = await start_bots(at_second)
    try:
        run = await spawn("run", *map(str, scenarios), "--bridge", at_first, "--concurrency", "2")
        await wait_until(lambda: live_at(pg_url, at_second) == 2, 90,
                         "both live at the second bridge", alive=[first, second])  # fmt: skip
        run.send_signal(signal.SIGINT)
        _out, err = await asyncio.wait_for(run.communicate(), 60)
        assert run.returncode == 1 and b"Traceback" not in err, err.decode()[-2000:]
        shown = await spawn("runs", "show", "20", "--db", pg_url, "--json")
        shown_out, _ = await asyncio.wait_for(shown.communicate(), 60)
    finally:
        await stop(bots)
        await stop([first, second])
    doc = json.loads(shown_out)
    assert doc["status"] == "cancelled"
    assert [s["stop_reason"] for s in doc["sessions"]] == ["cancelled", "cancelled"]
    assert {s["bridge"]["address"] for s in doc["sessions"]} == {at_second}
    assert jobs_left(pg_url) == 0


@pytest.mark.timeout(120)
async def test_an_attempt_no_bridge_takes_is_recorded_peer_never_joined(pg_url: str) -> None:
    """No bridge has bots: the queued attempt is withdrawn after the pairing timeout."""
    first, at_first = await start_shared_bridge(pg_url)
    second, _at_second = await start_shared_bridge(pg_url)
    try:
        run = await spawn("run", str(sorted(SUITE.glob("*.yaml"))[0]), "--bridge", at_first,
                          "--pairing-timeout", "1", "--max-retries", "0", "--json")  # fmt: skip
        out, err = await asyncio.wait_for(run.communicate(), 60)
    finally:
        await stop([first, second])
    assert run.returncode == 1, err.decode()[-2000:]
    (session,) = json.loads(out)["sessions"]
    assert session["stop_reason"] == "peer_never_joined"
    assert "no bridge sharing this database had a free user and agent bot" in session["stop_detail"]
    assert jobs_left(pg_url) == 0


@pytest.mark.timeout(300)
async def test_a_bridge_frozen_past_the_lease_never_leaves_a_second_result(pg_url: str) -> None:
    """SIGSTOP, then SIGCONT after the lease: the attempt it held was retried at the other
    bridge; what it records once it wakes is kept, superseded: one result per scenario."""
    scenarios = sorted(SUITE.glob("*.yaml"))[:2]
    first, at_first = await start_shared_bridge(pg_url)
    second, at_second = await start_shared_bridge(pg_url)
    second_bots = await start_bots(at_second)
    first_bots: list[asyncio.subprocess.Process] = []
    try:
        run = await spawn("run", *map(str, scenarios), "--bridge", at_first, "--concurrency", "2",
                          "--retry-backoff", "0.5", "--json")  # fmt: skip
        await wait_until(lambda: live_at(pg_url, at_second) >= 1, 90,
                         "a live session at the second bridge", alive=[first, second])  # fmt: skip
        second.send_signal(signal.SIGSTOP)
        first_bots = await start_bots(at_first)
        out, err = await asyncio.wait_for(run.communicate(), 240)
        second.send_signal(signal.SIGCONT)
        assert run.returncode == 0, err.decode()[-3000:]
        run_id = json.loads(out)["run_id"]

        def settled() -> bool:
            """The woken bridge recorded the attempts it held, as given up (superseded)."""
            with RecordingReader(pg_url) as reader:
                bridges = reader.session_bridges(run_id)
                held = [s for s in reader.sessions(run_id)
                        if bridges.get(s.session_id, {}).get("address") == at_second]  # fmt: skip
                return bool(held) and all(
                    s.superseded_reason.startswith("given up by the run's bridge") for s in held
                )

        await wait_until(settled, 90, "the woken bridge to record its end", alive=[first, second])
        shown = await spawn("runs", "show", run_id, "--db", pg_url, "--json")
        shown_out, _ = await asyncio.wait_for(shown.communicate(), 60)
    finally:
        second.send_signal(signal.SIGCONT)
        await stop([*first_bots, *second_bots])
        await stop([first, second])
    sessions = json.loads(shown_out)["sessions"]
    woken = [s for s in sessions if s["bridge"]["address"] == at_second]
    assert woken and all(s["status"] == "superseded" for s in woken), woken
    current = [s for s in sessions if s["status"] != "superseded"]
    assert sorted(s["scenario"] for s in current) == sorted(p.stem for p in scenarios)
    assert all(s["bridge"]["address"] == at_first for s in current)


@pytest.mark.timeout(120)
async def test_a_run_still_running_at_one_bridge_is_not_resumed_at_another(pg_url: str) -> None:
    first, at_first = await start_shared_bridge(pg_url)
    second, at_second = await start_shared_bridge(pg_url)
    try:
        run = await spawn("run", str(sorted(SUITE.glob("*.yaml"))[0]), "--bridge", at_first,
                          "--pairing-timeout", "60", "--run-id", "waiting")  # fmt: skip
        await wait_until(lambda: jobs_left(pg_url) == 1, 30, "the attempt queued",
                         alive=[first, second, run])  # fmt: skip
        resume = await spawn("run", "--resume", "waiting", "--bridge", at_second)
        _out, err = await asyncio.wait_for(resume.communicate(), 60)
        run.send_signal(signal.SIGINT)
        await asyncio.wait_for(run.communicate(), 60)
    finally:
        await stop([first, second])
    assert resume.returncode == 1 and b"Traceback" not in err, err.decode()
    assert f"still running at the bridge at {at_first}".encode() in err, err.decode()
    with RecordingReader(pg_url) as reader:
        assert reader.sessions("waiting") == []  # the resume started nothing
