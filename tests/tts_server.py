"""An OpenAI-compatible ``/v1/audio/speech`` server on loopback, for tests.

It speaks the real API (a JSON request with ``model``, ``voice``, ``input``,
``response_format``, ``speed``; raw PCM16 at 24 kHz back), so vae's speech
engine runs through the real ``openai`` client over real HTTP. The audio is a
tone whose length follows the words and the speed (a test can tell a faster
reply from a slower one). ``status`` makes every request fail with it. Every
request is kept.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import numpy as np

from vae.bots.stand_in.loopback import LoopbackServer, QuietHandler

RATE = 24000


def speech_pcm(text: str, speed: float) -> bytes:
    """0.3 s of a 220 Hz tone per word, shortened by ``speed``."""
    n = int(RATE * 0.3 * max(1, len(text.split())) / max(speed, 0.25))
    t = np.arange(n) / RATE
    return (np.sin(2 * np.pi * 220 * t) * 8000).astype("<i2").tobytes()


class _Handler(QuietHandler):
    server: SpeechServer

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        request = json.loads(body or b"{}")
        with self.server.lock:
            self.server.requests.append({"path": self.path, **request})
        if self.path.rstrip("/") != "/v1/audio/speech" or self.server.status != 200:
            status = self.server.status if self.server.status != 200 else 404
            reply = json.dumps({"error": {"message": "speech unavailable"}}).encode()
            self.send_body(status, reply, "application/json")
            return
        pcm = speech_pcm(str(request.get("input", "")), float(request.get("speed", 1.0)))
        self.send_body(200, pcm, "audio/pcm")


class SpeechServer(LoopbackServer):
    def __init__(self, status: int = 200) -> None:
        super().__init__(_Handler, name="tts")
        self.status = status
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
