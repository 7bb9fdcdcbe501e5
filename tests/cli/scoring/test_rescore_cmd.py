"""``vae rescore``, ``vae scores`` and ``vae scorer serve`` through the real CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.factories import write_run_sync
from tests.scorer_service.conftest import FakeJudge, standard_sessions
from vae.cli.main import vae
from vae.recordings.read.reader import RecordingReader

NO_AUDIO = ["--only", "action_match", "--only", "db_state_match", "--only", "clean_exit"]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "vae.db"
    scenarios, sessions = standard_sessions()
    write_run_sync(path, scenarios, sessions)
    return path


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(vae, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_rescore_prints_a_summary(db: Path) -> None:
    code, out, _ = invoke("rescore", "--run", "2024-06-01", "--db", str(db), "--no-judge")
    assert code == 0
    assert "Success rate:      33.3%" in out
    assert "[book_wrong] failed" in out and "failed signals: ACTION_MATCH" in out
    assert "Latency: n=" in out and "Tokens agent:" in out


def test_rescore_json_and_env(db: Path) -> None:
    code, out, _ = invoke("rescore", "--run", "2024", "--json", *NO_AUDIO, env={"VAE_DB": str(db)})
    assert code == 0
    data = json.loads(out)
    assert data["summary"]["success_rate"] == pytest.approx(1 / 3)
    assert {s["scenario_name"] for s in data["sessions"]} == {"book_ok", "book_wrong", "db_case"}
    with RecordingReader(db) as reader:
        assert [s.scoring_id for s in reader.scorings()] == [data["scoring_id"]]


def test_fail_under(db: Path) -> None:
    assert (
        invoke("rescore", "--run", "2024", "--db", str(db), *NO_AUDIO, "--fail-under", "0.3")[0]
        == 0
    )
    code, _, err = invoke(
        "rescore", "--run", "2024", "--db", str(db), *NO_AUDIO, "--fail-under", "0.9"
    )
    assert code == 1
    assert "below --fail-under 0.9" in err


def test_scenarios_needing_a_judge_are_refused_without_one(db: Path) -> None:
    code, _, err = invoke("rescore", "--run", "2024", "--db", str(db))
    assert code == 2
    assert "1 scenario(s) need a judge" in err and "book_ok" in err
    assert "--judge-base-url" in err and "--no-judge" in err
    with RecordingReader(db) as reader:
        assert reader.scorings() == []


def test_usage_errors_exit_2_and_write_nothing(db: Path, tmp_path: Path) -> None:
    code, _, err = invoke("rescore", "--run", "1999", "--db", str(db))
    assert code == 2 and "no run matches '1999'" in err
    bad = tmp_path / "over.yaml"
    bad.write_text("book_ok:\n  refrence_answer: {}\n")
    code, _, err = invoke("rescore", "--run", "2024", "--db", str(db), "--overrides", str(bad))
    assert code == 2 and "refrence_answer: unknown override" in err and str(bad) in err
    bad.write_text("book_ok: [unclosed\n")
    code, _, err = invoke("rescore", "--run", "2024", "--db", str(db), "--overrides", str(bad))
    assert code == 2 and "not valid" in err
    code, _, err = invoke(
        "rescore", "--run", "2024", "--db", str(db), "--judge-base-url", "http://x"
    )
    assert code == 2 and "judge model" in err
    with RecordingReader(db) as reader:
        assert reader.scorings() == []


def test_ambiguous_prefix(db: Path) -> None:
    scenarios, sessions = standard_sessions()
    write_run_sync(db, scenarios, sessions, run_id="2024-06-01T11-00-00")
    code, _, err = invoke("rescore", "--run", "2024-06-01", "--db", str(db))
    assert code == 2 and "matches 2 runs" in err


def test_overrides_overwrite_list_show_diff(db: Path, tmp_path: Path) -> None:
    code, out, _ = invoke("rescore", "--run", "2024", "--db", str(db), *NO_AUDIO, "--json")
    first = json.loads(out)["scoring_id"]
    overrides = tmp_path / "fix.json"
    overrides.write_text(
        json.dumps({"book_wrong": {"reference_answer": {"name": "Bob", "party": 3}}})
    )
    code, out, _ = invoke(
        "rescore",
        "--run",
        "2024",
        "--db",
        str(db),
        *NO_AUDIO,
        "--json",
        "--overrides",
        str(overrides),
        "--overwrite",
        "--make-current",  # a subset (--only) replaces the run's current scoring only so
        "--label",
        "fixed ref",
    )
    assert code == 0
    second = json.loads(out)["scoring_id"]
    code, out, _ = invoke("scores", "list", "2024", "--db", str(db))
    assert code == 0
    assert re.search(rf"{re.escape(first)}\s+superseded by {re.escape(second)}", out)
    assert out.splitlines()[0].split() == [
        "scoring",
        "(run.created)",
        "state",
        "success",
        "unscored",
        "judge",
        "label",
    ]
    # the current scoring (what vae report shows) is marked
    assert re.search(
        rf"^\*\s+{re.escape(second)}\s+complete\s+66.7%\s+0\s+-\s+fixed ref$", out, re.M
    )
    # the shortest prefix of the second id that the first does not share: unique by construction
    # (both ids can carry the same second and the same first random hex digits)
    prefix = next(second[:n] for n in range(1, len(second) + 1) if not first.startswith(second[:n]))
    code, out, _ = invoke("scores", "show", prefix, "--db", str(db), "--json")
    assert code == 0 and json.loads(out)["summary"]["success_rate"] == pytest.approx(2 / 3)
    code, out, _ = invoke("scores", "diff", first, second, "--db", str(db))
    assert code == 0
    assert "3 flips" in out and re.search(r"book_wrong\s+ACTION_MATCH\s+failed -> passed", out)
    assert re.search(r"^\s+fix\s+book_wrong\s+failed\s+passed\s+ACTION_MATCH now passes", out, re.M)
    assert re.search(r"success rate\s+33.3%\s+66.7%\s+\+33.3 pp\s+better", out)
    assert re.search(r"scoring\.overrides\.book_wrong", out), "the configuration difference"
    code, out, _ = invoke("scores", "diff", first, second, "--db", str(db), "--json")
    assert len(json.loads(out)["flips"]) == 3
    assert invoke("scores", "show", "nope", "--db", str(db))[0] == 2


def test_judge_options_reach_the_judge(db: Path) -> None:
    judge = FakeJudge()
    judge.thread.start()
    try:
        args = [
            "rescore",
            "--run",
            "2024",
            "--db",
            str(db),
            "--only",
            "judge",
            "--json",
            "--judge-base-url",
            judge.base_url,
            "--judge-model",
            "m1",
            "--judge-seed",
            "3",
            "--judge-temperature",
            "0",
            "--judge-max-tokens",
            "50",
            "--judge-threshold",
            "0.5",
        ]
        code, out, err = invoke(*args, env={"VAE_JUDGE_API_KEY": "sk-from-env"})
        # --only judge leaves the gating ACTION_MATCH/CLEAN_EXIT unscored: exit 1, said why.
        assert code == 1
        assert "3 session(s) have an unscored gating signal (not_scored: 3)" in err
        assert judge.requests == 3
        body = judge.bodies[0]
        assert (body["model"], body["seed"], body["temperature"], body["max_tokens"]) == (
            "m1",
            3,
            0,
            50,
        )
        data = json.loads(out)
        assert data["judge_model"] == "m1" and "sk-from-env" not in out
        assert data["config"]["judge"]["threshold"] == 0.5
        assert invoke(*args, "--allow-unscored")[0] == 0
        assert judge.requests == 3  # second rescore: all cached
        assert invoke(*args, "--allow-unscored", "--no-judge-cache")[0] == 0
        assert judge.requests == 6  # the cache bypassed: asked again
    finally:
        judge.release.set()
        judge.server.shutdown()
        judge.server.server_close()


@pytest.fixture
def serve(db: Path) -> Iterator[str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vae.cli.main",
            "scorer",
            "serve",
            "--address",
            "127.0.0.1:0",
            "--db",
            str(db),
            "--token",
            "tok",
        ],
        stderr=subprocess.PIPE,
        text=True,
        cwd=str(Path(__file__).parents[3]),
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline()  # blocks until the server prints its address
        match = re.search(r"on (127\.0\.0\.1:\d+)", line)
        assert match, line
        yield match.group(1)
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def test_rescore_through_a_running_scorer(db: Path, serve: str) -> None:
    args = ["rescore", "--run", "2024", "--scorer", serve, *NO_AUDIO]
    code, out, err = invoke(*args, "--token", "tok", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["summary"]["success_rate"] == pytest.approx(1 / 3)
    assert len(data["sessions"]) == 3
    with RecordingReader(db) as reader:
        assert [s.scoring_id for s in reader.scorings()] == [data["scoring_id"]]
    code, _, err = invoke(*args, "--token", "wrong")
    assert code == 1 and "UNAUTHENTICATED" in err
    code, _, err = invoke("rescore", "--run", "1999", "--scorer", serve, "--token", "tok")
    assert code == 2 and "no run matches" in err
