"""Rescoring a changed tool call expectation judges the recorded calls again: no new call."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from tests.factories import SessionSpec, Turn, scenario, write_run_sync
from vae.cli.main import vae
from vae.recordings.models import EventKind
from vae.recordings.read.reader import RecordingReader

BOOKED = {"date": "2026-05-02", "time": "19:00", "party_size": 2}


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(vae, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def test_a_changed_expectation_flips_the_verdict(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    tools = {"book_table": {"date": "day", "time": "HH:MM", "party_size": "guests"}}
    doc = scenario(
        "booking",
        tool_backend=True,
        agent={"resources": {"tools": tools}},
        tool_call_expectations=[{"tool": "book_table", "arguments": {"date": "2026-05-02"}}],
        success_signals=["TOOL_CALLS"],
    )
    served = {"tool": "book_table", "arguments": BOOKED, "status": 200, "result": {"ok": True},
              "transport": "http"}  # fmt: skip
    spec = SessionSpec(
        "booking",
        turns=[Turn("user", 0.5, 2.0, "May second please"), Turn("agent", 2.5, 3.5, "Done")],
        events=[
            (0.1, "agent", EventKind.TOOL_BACKEND, {"event": "started"}),
            (3.0, "agent", EventKind.TOOL_BACKEND_CALL, served),
        ],
    )
    info = write_run_sync(db, [doc], [spec])
    only = ["--only", "tool_calls"]
    code, out = invoke("rescore", "--run", info.run_id, "--db", str(db), *only, "--json")
    assert code == 0, out
    first = json.loads(out)
    overrides = tmp_path / "overrides.json"
    changed = [{"tool": "book_table", "arguments": {"date": "2026-05-01"}}]
    overrides.write_text(json.dumps({"booking": {"tool_call_expectations": changed}}))
    code, out = invoke("rescore", "--run", info.run_id, "--db", str(db), *only, "--json",
                       "--overrides", str(overrides))  # fmt: skip
    assert code in (0, 1), out
    second = json.loads(out)
    code, out = invoke("scores", "diff", first["scoring_id"], second["scoring_id"], "--db", str(db))
    assert code == 0, out
    assert re.search(r"booking\s+TOOL_CALLS\s+passed -> failed", out), out
    with RecordingReader(db) as reader:
        assert [s.session_id for s in reader.sessions(info.run_id)] == info.all_session_ids
        scores = {s.signal: s for s in reader.scores(second["scoring_id"])}
    row = scores["TOOL_CALLS"].detail["expectations"][0]
    assert (row["tool"], row["argument"]) == ("book_table", "date")
    assert 'expected "2026-05-01", got "2026-05-02"' in row["reason"]
