"""Replay precision: how exactly a replayed caller lines up with the recording.

Records the example suite with the scripted reference bots (in-process bridge
on loopback, real SQLite), replays every recorded caller to the unchanged
reference agent, and measures per user turn:

1. **within turns**: the replayed turn's samples (on the caller's channel, at
   the offsets the replay reported) against the recorded turn's, sample for
   sample;
2. **gate, live**: where the player started each turn, counted from the
   agent's end of speech (or onset, for a barge-in) on the delivered line,
   against the cue it was given (recorded gap, floored by the gate silence);
3. **gate, re-measured**: the replayed run cut again from its own recording
   (``vae.recordings.read.replay_script``, the bridge clock) against the recording's
   cut: the gap after the agent's end of speech, or the barge-in offset.

Usage: ``python benchmarks/replay.py [--suite examples/suite] [--concurrency 2] [--quick]``
(the reference bots speak with the deterministic buzz voice; ``--quick``: the
suite's first three scenarios only, a smoke run).
Prints a table per turn and a summary; never asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.bridge_service.replay.helpers import (
    placed_turns,
    record,
    replay,
    sent_stream,
    session_of,
)
from vae.bridge_service.config import BridgeSettings
from vae.bridge_service.server import BridgeServer
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.replay_script import Gate, load_script

GATE_S = 0.5


def _suite(path: Path) -> list[dict[str, Any]]:
    docs = []
    for f in sorted(path.glob("*.yaml")):
        doc = yaml.safe_load(f.read_text())
        docs.extend(doc if isinstance(doc, list) else [doc])
    return docs


def _rows(db: Path, source: str, again: str, name: str) -> list[dict[str, Any]]:
    src, rep = session_of(db, source, name), session_of(db, again, name)
    with RecordingReader(db) as reader:
        recorded = load_script(reader, src, gate_silence_s=GATE_S)
        recut = load_script(reader, rep, gate_silence_s=GATE_S)
        stop = reader.session(rep).stop_reason  # type: ignore[union-attr]
    placed = {p["turn"]: p for p in placed_turns(db, rep)}
    stream = sent_stream(db, rep)
    rows = []
    for t in recorded.turns:
        p = placed.get(t.index)
        row: dict[str, Any] = {"scenario": name, "turn": t.index, "gate": str(t.gate),
                               "recorded_s": t.delay_s, "stop": stop}  # fmt: skip
        if p is None:
            rows.append({**row, "played": False})
            continue
        got = stream[p["start_offset"] : p["end_offset"]]
        cut = len(got) < len(t.samples)  # the call ended (end tool) while it played
        cue = max(GATE_S, t.delay_s) if t.gate is Gate.AFTER_AGENT else t.delay_s
        again_t = recut.turns[t.index] if t.index < len(recut.turns) else None
        rows.append({
            **row, "played": True, "cut": cut,
            "exact": bool(np.array_equal(got, t.samples[: len(got)])),
            "live_err_samples": round(abs(p["delay_s"] - cue) * recorded.rate),
            "recut_gate": str(again_t.gate) if again_t else "-",
            "recut_err_ms": None if again_t is None else (again_t.delay_s - cue) * 1000,
        })  # fmt: skip
    return rows


async def main(suite: Path, concurrency: int, limit: int = 0) -> None:
    docs = _suite(suite)
    docs = docs[:limit] if limit else docs
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "replay.db"
        settings = BridgeSettings(address="127.0.0.1:0", wait_timeout_s=60)
        async with BridgeServer(db, settings) as server:
            t0 = time.perf_counter()
            opts: dict[str, Any] = {"inactivity_timeout_s": 8, "timeout_s": 600}
            source = await record(server, docs, concurrency=concurrency, **opts)
            t1 = time.perf_counter()
            again = await replay(server, source, scenarios=concurrency, **opts)
            t2 = time.perf_counter()
        rows = [r for d in docs for r in _rows(db, source, again, d["name"])]
    print(f"recorded {len(docs)} scenarios in {t1 - t0:.1f} s, replayed in {t2 - t1:.1f} s")
    print(f"{'scenario':34} turn gate         rec_s  exact live_err recut_gate  recut_err_ms")
    for r in rows:
        if not r["played"]:
            print(f"{r['scenario']:34} {r['turn']:>4} {r['gate']:11} not played ({r['stop']})")
            continue
        err = "-" if r["recut_err_ms"] is None else f"{r['recut_err_ms']:+.2f}"
        head = f"{r['scenario']:34} {r['turn']:>4} {r['gate']:11} {r['recorded_s']:6.3f}"
        print(f"{head} {r['exact']!s:5} {r['live_err_samples']:>8} {r['recut_gate']:11} {err:>12}")
    played = [r for r in rows if r["played"]]
    errs = np.array([abs(r["recut_err_ms"]) for r in played if r["recut_err_ms"] is not None])
    exact = sum(r["exact"] for r in played)
    cut = sum(r["cut"] for r in played)
    print(f"turns played {len(played)}/{len(rows)} ({cut} cut short by the call's end);"
          f" sample-exact {exact}")  # fmt: skip
    print(f"live gate error: max {max((r['live_err_samples'] for r in played), default=0)} samples")
    if len(errs):
        print(f"re-measured gate error: p50 {np.median(errs):.2f} ms, max {errs.max():.2f} ms")
    same = sum(r["recut_gate"] == r["gate"] for r in played)
    print(f"cue kinds found again in the replay's own recording: {same}/{len(played)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", type=Path, default=Path("examples/suite"))
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="the first 3 scenarios only")
    args = parser.parse_args()
    asyncio.run(main(args.suite, args.concurrency, 3 if args.quick else 0))
