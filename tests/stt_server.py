"""An OpenAI-compatible ``/v1/audio/transcriptions`` server on loopback, for tests.

It speaks the real API (multipart upload of a WAV file, JSON ``{"text": ...}``
reply), so vae's engine runs through the real ``openai`` client over real
HTTP. A responder decides each reply from the uploaded audio: a string is the
transcription; a :class:`Reply` is anything else (an error status, garbage, a
delay longer than the client's timeout). Every request is counted.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from vae.bots.stand_in.loopback import LoopbackServer, QuietHandler, wav_upload


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
    samples, rate, fields = wav_upload(content_type, body)
    return Upload(samples, rate, fields)


class _Handler(QuietHandler):
    server: TranscriptionServer

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/audio/transcriptions"):
            self.send_body(404, b'{"error": {"message": "no route"}}', "application/json")
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
            self.send_body(reply.status, reply.body, reply.content_type)


class TranscriptionServer(LoopbackServer):
    """``with TranscriptionServer(responder) as server: server.base_url``."""

    def __init__(self, responder: Responder) -> None:
        super().__init__(_Handler, name="stt")
        self.responder = responder
        self.uploads: list[Upload] = []
        #: The Authorization header of each request.
        self.authorizations: list[str] = []
        self.lock = threading.Lock()
        #: Set on close: a delayed reply stops waiting.
        self.release = threading.Event()

    @property
    def calls(self) -> int:
        with self.lock:
            return len(self.uploads)

    def close(self) -> None:
        self.release.set()
        super().close()


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
