"""Rescoring a run while another process reads the same database file."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from tests.factories import SessionSpec, conversation, scenario, write_run
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore

READER = r"""
import json, sys, time
from vae.recordings.read.reader import RecordingReader
path, run_id = sys.argv[1], sys.argv[2]
loops, errors, seen = 0, [], None
deadline = time.monotonic() + 60
with RecordingReader(path) as reader:
    while time.monotonic() < deadline:
        try:
            sessions = reader.sessions(run_id)
            for s in sessions:
                reader.read_channel(s.session_id, "agent")
            for sc in reader.scorings(run_id):
                scores = reader.scores(sc.scoring_id)
                if sc.status == "complete":
                    seen = {"scoring": sc.scoring_id, "scores": len(scores)}
        except Exception as exc:
            errors.append(repr(exc))
        loops += 1
        if loops == 1:
            print("ready", flush=True)
        if seen is not None:
            break
print(json.dumps({"loops": loops, "errors": errors, "seen": seen}), flush=True)
"""


async def test_rescore_while_another_process_reads(db_path: Path) -> None:
    specs = [SessionSpec(f"s{i}", turns=conversation(4)) for i in range(6)]
    info = await write_run(db_path, [scenario(f"s{i}") for i in range(6)], specs)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        READER,
        str(db_path),
        info.run_id,
        stdout=asyncio.subprocess.PIPE,
        cwd=str(Path(__file__).parents[2]),
    )
    assert proc.stdout is not None
    ready = await asyncio.wait_for(proc.stdout.readline(), timeout=30)
    assert ready.strip() == b"ready"
    result = await rescore(db_path, info.run_id, ScoringConfig())
    line = await asyncio.wait_for(proc.stdout.readline(), timeout=60)
    assert await asyncio.wait_for(proc.wait(), timeout=30) == 0
    report = json.loads(line)
    assert report["errors"] == []
    assert report["loops"] >= 1
    assert report["seen"]["scoring"] == result.scoring.scoring_id
    assert report["seen"]["scores"] == sum(len(o.scores) for o in result.sessions)
