"""A minimal OpenAI-compatible chat-completions server on loopback.

Used for the demo's offline stand-in judge (and by tests as the endpoint of
LLM-driven bots), so those paths run through the real ``openai`` client over
real HTTP with no network. It runs in its own thread (``ThreadingHTTPServer``)
so it serves a client on any event loop, and stops with :meth:`close`.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: Given the request body, return the assistant message:
#: ``{"content": str | None, "tool_calls": [...]}``.
Responder = Callable[[dict[str, Any]], dict[str, Any]]


def _words(value: Any) -> int:
    return len(json.dumps(value).split())


class _Handler(BaseHTTPRequestHandler):
    server: OpenAICompatibleServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            model = {"id": self.server.model, "object": "model", "owned_by": "vae"}
            self._reply(200, {"object": "list", "data": [model]})
        else:
            self._reply(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._reply(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length) or b"{}")
            message = self.server.responder(request)
        except Exception as exc:  # a broken request or rule is the client's 400
            self._reply(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
            return
        with self.server.lock:
            self.server.requests.append(request)
        calls = message.get("tool_calls") or None
        self._reply(
            200,
            {
                "id": f"chatcmpl-{len(self.server.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.get("model", self.server.model),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "tool_calls" if calls else "stop",
                        "message": {
                            "role": "assistant",
                            "content": message.get("content"),
                            "tool_calls": calls,
                        },
                    }
                ],
                "usage": {
                    "prompt_tokens": _words(request.get("messages", [])),
                    "completion_tokens": _words(message),
                    "total_tokens": _words(request.get("messages", [])) + _words(message),
                },
            },
        )


class OpenAICompatibleServer(ThreadingHTTPServer):
    """``with OpenAICompatibleServer(responder) as server: server.base_url``."""

    daemon_threads = True

    def __init__(
        self,
        responder: Responder,
        *,
        model: str = "vae-offline",
        port: int = 0,
        host: str = "127.0.0.1",
    ) -> None:
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, port), _Handler)
        self.responder = responder
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        # serve_forever checks for shutdown() every poll_interval: its default of 0.5 s
        # made close() (the end of every vae demo) wait up to half a second.
        self._thread = threading.Thread(
            target=self.serve_forever, args=(0.02,), name="openai-compat", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        shown = f"[{host!s}]" if ":" in str(host) else str(host)
        return f"http://{shown}:{port}/v1"

    def start(self) -> OpenAICompatibleServer:
        self._thread.start()
        return self

    def close(self) -> None:
        if self._thread.is_alive():
            self.shutdown()
            self._thread.join()
        self.server_close()

    def __enter__(self) -> OpenAICompatibleServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
