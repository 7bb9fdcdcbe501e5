"""Fixtures for the scorer tests: a loopback OpenAI-compatible judge and recorded runs.

:class:`FakeJudge` is a real HTTP server (stdlib ``http.server`` in a thread)
speaking the ``/v1/chat/completions`` shape the ``openai`` client expects. A
test queues behaviours — ``"good"``, ``"fail"`` (score 0.2), ``"garbage"``,
``"429"``, ``"500"``, ``"hang"``, ``"slow"`` (good after 0.2 s) — consumed one
per request (the default applies when the queue is empty), and reads
``requests`` to count calls and ``max_in_flight`` for concurrency.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.factories import RunInfo, SessionSpec, ToolCallSpec, conversation, scenario, write_run


class FakeJudge:
    def __init__(self) -> None:
        self.behaviours: deque[str] = deque()
        self.default = "good"
        self.requests = 0
        self.bodies: list[dict[str, Any]] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with judge._lock:
                    judge.requests += 1
                    judge.bodies.append(body)
                    mode = judge.behaviours.popleft() if judge.behaviours else judge.default
                    judge.in_flight += 1
                    judge.max_in_flight = max(judge.max_in_flight, judge.in_flight)
                try:
                    judge.respond(self, mode, body)
                finally:
                    with judge._lock:
                        judge.in_flight -= 1

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @staticmethod
    def verdict_for(body: dict[str, Any], score: float) -> str:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        section = re.search(r"<nl_assertions>\n(.*?)\n</nl_assertions>", user, re.DOTALL)
        lines = (
            [] if section is None or section.group(1) == "none" else section.group(1).split("\n")
        )
        verdicts = [
            {"index": i, "passed": score >= 0.5, "reason": "checked"} for i in range(len(lines))
        ]
        return json.dumps(
            {"score": score, "reason": "synthetic", "nl_assertion_verdicts": verdicts}
        )

    def respond(self, handler: BaseHTTPRequestHandler, mode: str, body: dict[str, Any]) -> None:
        if mode == "hang":
            self.release.wait(10)
            return
        if mode == "slow":
            # Hold the request open a moment so concurrent requests overlap.
            self.release.wait(0.2)
            mode = "good"
        if mode in ("401", "403", "404", "429", "500"):
            payload = json.dumps({"error": {"message": f"synthetic {mode}"}}).encode()
            handler.send_response(int(mode))
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
            return
        content = {
            "good": lambda: self.verdict_for(body, 0.95),
            "fail": lambda: self.verdict_for(body, 0.2),
            "garbage": lambda: "I think the agent did fine, probably.",
        }[mode]()
        reply = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        payload = json.dumps(reply).encode()
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)


@pytest.fixture
def fake_judge() -> Iterator[FakeJudge]:
    judge = FakeJudge()
    judge.thread.start()
    try:
        yield judge
    finally:
        judge.release.set()
        judge.server.shutdown()
        judge.server.server_close()


def standard_sessions() -> tuple[list[dict[str, Any]], list[SessionSpec]]:
    """Three scenarios: one passing, one with a wrong action, one DB-gated dual-sided."""
    scenarios = [
        scenario(
            "book_ok",
            reference_answer={"name": "Ann", "party": 2},
            nl_assertions=["The agent confirmed the booking"],
        ),
        scenario("book_wrong", reference_answer={"name": "Bob", "party": 4}),
        scenario(
            "db_case",
            domain="telecom",
            expected_scenario_db={"plan": "gold"},
            expected_user_db={"roaming": True},
            success_signals=["DB_STATE_MATCH", "CLEAN_EXIT"],
        ),
    ]
    sessions = [
        SessionSpec(
            "book_ok",
            turns=conversation(3),
            tool_calls=[ToolCallSpec("book", {"name": "Ann", "party": 2}, at_s=3.0)],
        ),
        SessionSpec(
            "book_wrong",
            turns=conversation(3),
            tool_calls=[ToolCallSpec("book", {"name": "Bob", "party": 3}, at_s=3.0)],
        ),
        SessionSpec(
            "db_case",
            turns=conversation(2),
            agent_state={"plan": "gold"},
            user_state={"roaming": False},
            stop_reason="max_duration",
        ),
    ]
    return scenarios, sessions


@pytest.fixture
async def recorded_run(db_path: Path) -> RunInfo:
    scenarios, sessions = standard_sessions()
    return await write_run(db_path, scenarios, sessions)
