"""An HTTP server on loopback in a thread of its own: what every offline stand-in runs on.

Why one copy: vae's stand-ins for OpenAI-compatible services — the chat
endpoint of the demo's judge (:mod:`.openai_server`), the STT, LLM and TTS of
the LiveKit example (``examples/livekit_agent/stand_ins.py``) and the speech
servers the tests start — each need the same plumbing: a
``ThreadingHTTPServer`` bound to loopback (port 0: the system picks a free
one), serving in its own daemon thread so a client on any event loop reaches
it, a ``base_url`` ending in ``/v1`` as the ``openai`` client expects, and a
clean stop. Each stand-in brings only its handler. :func:`wav_upload` reads
the multipart WAV upload of ``/v1/audio/transcriptions``, which two of them
answer. Standard library (numpy only for the upload, imported when used).
"""

from __future__ import annotations

import io
import socket
import threading
import wave
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    import numpy as np


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing and answers with whole bodies."""

    def log_message(self, format: str, *args: Any) -> None:
        return

    def send_body(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class LoopbackServer(ThreadingHTTPServer):
    """``with Server(...) as server: server.base_url`` serves until the block ends."""

    daemon_threads = True

    def __init__(
        self,
        handler: type[BaseHTTPRequestHandler],
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        name: str = "stand-in",
    ) -> None:
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, port), handler)
        # serve_forever checks for shutdown() every poll_interval: its default of 0.5 s
        # made close() (the end of every vae demo) wait up to half a second.
        self._thread = threading.Thread(
            target=self.serve_forever, args=(0.02,), name=name, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        shown = f"[{host!s}]" if ":" in str(host) else str(host)
        return f"http://{shown}:{port}/v1"

    def start(self) -> Self:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving (the requests in flight finish) and free the port."""
        if self._thread.is_alive():
            self.shutdown()
            self._thread.join()
        self.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def wav_upload(content_type: str, body: bytes) -> tuple[np.ndarray, int, dict[str, str]]:
    """The ``file`` part of a multipart upload as int16 samples and rate, and its other fields.

    Raises ``ValueError`` (``wave.Error`` included) when there is no WAV file to read.
    """
    import numpy as np

    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    fields: dict[str, str] = {}
    audio: bytes | None = None
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True) or b""
        if not isinstance(payload, bytes):  # a nested multipart: no field of ours
            continue
        if name == "file":
            audio = payload
        elif isinstance(name, str):
            fields[name] = payload.decode()
    if audio is None:
        raise ValueError("no file in the upload")
    with wave.open(io.BytesIO(audio), "rb") as w:
        samples = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
        rate = w.getframerate()
    return samples, rate, fields
