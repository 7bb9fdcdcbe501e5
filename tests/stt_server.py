"""An OpenAI-compatible ``/v1/audio/transcriptions`` server on loopback, for tests.

It speaks the real API (multipart upload of a WAV file, JSON ``{"text": ...}``
reply), so vae's engine runs through the real ``openai`` client over real
HTTP. A responder decides each reply from the uploaded audio: a string is the
transcription; a :class:`Reply` is anything else (an error status, garbage, a
delay longer than the client's timeout). Every request is counted.
"""

from __future__ import annotations

import contextlib
import io
import json
import threading
import wave
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Upload:
    samples: np.ndarray
    sample_rate: int
    fields: dict[str, str]

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.sample_rate if self.sample_rate else 0.0


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    delay_s: float = 0.0


Responder = Callable[[Upload], "str | Reply"]


def _upload(content_type: str, body: bytes) -> Upload:
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    fields: dict[str, str] = {}
    audio = b""
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True) or b""
        if name == "file":
            audio = payload
        elif isinstance(name, str):
            fields[name] = payload.decode()
    with wave.open(io.BytesIO(audio), "rb") as w:
        samples = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
        rate = w.getframerate()
    return Upload(samples, rate, fields)


class _Handler(BaseHTTPRequestHandler):
    server: TranscriptionServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/audio/transcriptions"):
            self._send(404, b'{"error": {"message": "no route"}}', "application/json")
            return
        upload = _upload(self.headers.get("Content-Type", ""), body)
        with self.server.lock:
            self.server.uploads.append(upload)
            self.server.authorizations.append(self.headers.get("Authorization", ""))
        reply = self.server.responder(upload)
        if isinstance(reply, str):
            reply = Reply(body=json.dumps({"text": reply}).encode())
        if reply.delay_s:
            self.server.release.wait(reply.delay_s)
        # The client may have given up waiting (a timeout test).
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._send(reply.status, reply.body, reply.content_type)


class TranscriptionServer(ThreadingHTTPServer):
    """``with TranscriptionServer(responder) as server: server.base_url``."""

    daemon_threads = True

    def __init__(self, responder: Responder) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.responder = responder
        self.uploads: list[Upload] = []
        #: The Authorization header of each request.
        self.authorizations: list[str] = []
        self.lock = threading.Lock()
        #: Set on close: a delayed reply stops waiting.
        self.release = threading.Event()
        self._thread = threading.Thread(target=self.serve_forever, name="stt", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def calls(self) -> int:
        with self.lock:
            return len(self.uploads)

    def __enter__(self) -> TranscriptionServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.shutdown()
        self._thread.join()
        self.server_close()


@dataclass
class ByDuration:
    """A responder: the text of the nearest listed duration (seconds) of speech.

    Leading and trailing silence (|sample| below ``floor``) is ignored, so the
    padding a caller adds around a turn does not change the answer.
    """

    texts: dict[float, str]
    floor: int = 300
    seen: list[float] = field(default_factory=list)

    def measure(self, samples: np.ndarray, rate: int) -> float:
        """Seconds from the first to the last sample above the floor."""
        loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > self.floor)
        return float((loud[-1] - loud[0]) / rate) if len(loud) else 0.0

    def __call__(self, upload: Upload) -> str:
        voiced = self.measure(upload.samples, upload.sample_rate)
        self.seen.append(voiced)
        nearest = min(self.texts, key=lambda d: abs(d - voiced))
        return self.texts[nearest]
