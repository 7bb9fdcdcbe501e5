"""Scorings left running by a dead process read, and are marked, interrupted."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

from vae.recordings.backends.connection import open_store
from vae.recordings.backends.locator import Locator
from vae.recordings.write.scoring_owner import (
    is_interrupted,
    mark_interrupted,
    owner_alive,
    owner_stamp,
)


def dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    return int(proc.stdout)


def test_owner_liveness() -> None:
    me = owner_stamp()
    assert owner_alive(me) is True
    assert owner_alive({**me, "pid": dead_pid()}) is False
    assert owner_alive({**me, "start": "1"}) is False  # the pid now belongs to another process
    assert owner_alive({**me, "host": socket.gethostname() + "-elsewhere"}) is None
    assert owner_alive(None) is None and owner_alive({"host": me["host"], "pid": "x"}) is None
    assert is_interrupted("running", {"owner": {**me, "pid": dead_pid()}})
    assert not is_interrupted("complete", {"owner": {**me, "pid": dead_pid()}})


def test_mark_interrupted_only_touches_dead_owners(store: Locator) -> None:
    conn = open_store(store)
    conn.execute(
        "INSERT INTO runs (run_id, created_ns, status, vae_version)"
        " VALUES ('r', 1, 'completed', '0')"
    )
    owners = {
        "dead": {"owner": {**owner_stamp(), "pid": dead_pid()}},
        "alive": {"owner": owner_stamp()},
        "unknown": {},
    }
    for sid, summary in owners.items():
        conn.execute(
            "INSERT INTO scorings (scoring_id, run_id, created_ns, status, config_json,"
            " summary_json) VALUES (?, 'r', 1, 'running', '{}', ?)",
            (sid, json.dumps(summary)),
        )
    assert mark_interrupted(conn) == ["dead"]
    rows = dict(conn.execute("SELECT scoring_id, status FROM scorings").fetchall())
    assert rows == {"dead": "interrupted", "alive": "running", "unknown": "running"}
    (summary,) = conn.execute(
        "SELECT summary_json FROM scorings WHERE scoring_id = 'dead'"
    ).fetchone()
    assert f"on {socket.gethostname()} ended" in json.loads(summary)["error"]
    assert os.getpid() != json.loads(summary)["owner"]["pid"]
    conn.close()
