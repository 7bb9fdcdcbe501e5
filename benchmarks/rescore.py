"""Rescoring throughput: recorded audio seconds scored per wall-clock second.

Writes N synthetic recorded sessions (both channels, alternating speech that
fills the session, tool calls, token usage, final states) into a fresh store,
then measures in the same run:

1. the baseline: reading every session's two channels back (the floor any
   audio-based scorer pays);
2. a rescore with every scorer but the judge, as a multiple of real time and
   as a ratio to the baseline (budget: at least 100x real time);
3. a rescore with the judge against a loopback OpenAI-compatible server, first
   pass and second pass, counting the judge calls (budget: zero on the second).

Usage: ``python benchmarks/rescore.py [--sessions 200] [--minutes 2] [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.factories import SessionSpec, ToolCallSpec, Turn, scenario, write_run
from vae.recordings.models import Channel
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import JudgeSettings, ScoringConfig
from vae.scorer_service.scoring.rescore import rescore


class _Judge:
    """A loopback chat-completions server that always answers a valid verdict."""

    def __init__(self) -> None:
        self.calls = 0
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                judge.calls += 1
                verdicts = [{"index": 0, "passed": True, "reason": "ok"}]
                content = json.dumps(
                    {"score": 1.0, "reason": "ok", "nl_assertion_verdicts": verdicts}
                )
                message = {"role": "assistant", "content": content}
                choice = {"index": 0, "finish_reason": "stop", "message": message}
                reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "bench"}
                body = json.dumps({**reply, "choices": [choice]}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def session_spec(i: int, seconds: float) -> SessionSpec:
    turns, t, side = [], 0.5, "agent"
    while t + 3.0 < seconds:
        length = 2.0 + (i + len(turns)) % 3
        turns.append(Turn(side, t, min(t + length, seconds - 0.5), f"{side} {len(turns)}"))
        t += length + 0.6
        side = "user" if side == "agent" else "agent"
    return SessionSpec(
        f"s{i:04d}",
        turns=turns,
        duration_s=seconds,
        tool_calls=[ToolCallSpec("book", {"name": "Ann", "n": i}, at_s=5.0)],
        agent_state={"bookings": [{"name": "Ann", "n": i}]},
    )


async def write(path: Path, sessions: int, seconds: float) -> str:
    scenarios = [
        scenario(
            f"s{i:04d}",
            reference_answer={"name": "Ann"},
            nl_assertions=["Booked"],
            expected_scenario_db={"bookings": [{"name": "Ann", "n": i}]},
        )
        for i in range(sessions)
    ]
    specs = [session_spec(i, seconds) for i in range(sessions)]
    info = await write_run(path, scenarios, specs)
    return info.run_id


def read_all(path: Path, run_id: str) -> float:
    with RecordingReader(path) as reader:
        for s in reader.sessions(run_id):
            for ch in (Channel.USER, Channel.AGENT):
                reader.read_channel(s.session_id, ch)
    return 0.0


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--quick", action="store_true", help="20 sessions of 1 minute")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.minutes = 20, 1.0
    seconds = args.minutes * 60
    audio_s = args.sessions * seconds
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        t = time.perf_counter()
        run_id = await write(path, args.sessions, seconds)
        print(
            f"wrote {args.sessions} sessions x {seconds:.0f}s ({audio_s / 3600:.2f} h of "
            f"stereo audio) in {time.perf_counter() - t:.1f}s"
        )

        t = time.perf_counter()
        await asyncio.to_thread(read_all, path, run_id)
        base = time.perf_counter() - t
        print(f"baseline (read both channels):  {base:7.2f}s  {audio_s / base:8.0f}x real time")

        t = time.perf_counter()
        result = await rescore(path, run_id, ScoringConfig(no_judge=True))
        wall = time.perf_counter() - t
        print(
            f"rescore without judge:          {wall:7.2f}s  {audio_s / wall:8.0f}x real time"
            f"  ({wall / base:.2f}x the read baseline; budget >= 100x real time)"
        )
        assert result.scoring.summary["sessions"] == args.sessions

        judge = _Judge()
        try:
            config = ScoringConfig(
                scorers=["judge", "action_match", "clean_exit"],
                judge=JudgeSettings(base_url=judge.url, model="bench", concurrency=8),
            )
            for label in ("first", "second"):
                before = judge.calls
                t = time.perf_counter()
                await rescore(path, run_id, config)
                took = time.perf_counter() - t
                print(
                    f"rescore with judge, {label} pass: {took:7.2f}s  "
                    f"{judge.calls - before} judge calls"
                )
        finally:
            judge.close()


if __name__ == "__main__":
    asyncio.run(main())
