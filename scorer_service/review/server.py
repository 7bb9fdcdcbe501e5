"""``vae review``'s server: the review page, its audio and label writes, behind a token.

Why so guarded, on a page that only runs locally: it shows recorded calls and
writes to the store. It binds to loopback unless told otherwise, checks the
``Host`` header there (a page on another site cannot reach it through DNS
rebinding), and every request — the page, its audio, each label — must carry
the random token that is printed in its URL (``?token=``, or the
``X-Vae-Token`` header the page's script sends with each label). A wrong or
missing token is 403 and writes nothing. A label is committed to the store
(through the file's single writer) before the request is answered, so what
the page says was saved is on disk.

Store reads run in a worker thread, one at a time (one reader connection).
The page's recordings and verdicts are read once, before the URL is printed
(about half a second for 200 sessions on a small machine); each load of the
page reads the labels anew. The page holds each session's summary and
labelling panel; a session's details are served (``/session/<id>``) when
the page opens it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from vae.recordings.labels import LabelError, LabelRecord
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.selection import select_run
from vae.recordings.write.writer import RecordingWriter, open_writer
from vae.scorer_service.labels.labelling import make_label
from vae.scorer_service.ledger.scorings import current_scoring, resolve_scoring
from vae.scorer_service.report.audio import session_audio
from vae.scorer_service.review.http import (
    MAX_HEAD,
    BadRequest,
    Request,
    Response,
    byte_range,
    json_response,
    read_request,
    write_response,
)
from vae.scorer_service.review.page import (
    base_data,
    render_review,
    review_data,
    session_details,
)

log = logging.getLogger("vae.scorer.review")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass
class ReviewServer:
    db_path: Path
    run_ref: str
    labeller: str
    scoring_ref: str | None = None
    host: str = "127.0.0.1"
    port: int = 0
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    def __post_init__(self) -> None:
        self._lock = asyncio.Lock()
        self._audio: dict[str, tuple[bytes, str] | None] = {}
        self._base: dict[str, Any] | None = None
        self._reader: RecordingReader | None = None
        self._writer: RecordingWriter | None = None
        self._server: asyncio.Server | None = None
        self.run_id = ""
        self.scoring_id: str | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        shown = f"[{host}]" if ":" in str(host) else str(host)
        return f"http://{shown}:{port}/?token={self.token}"

    async def _read(self, fn: Callable[[RecordingReader], Any]) -> Any:
        assert self._reader is not None
        reader = self._reader
        async with self._lock:
            return await asyncio.to_thread(fn, reader)

    async def serve(self, ready: Callable[[ReviewServer], Awaitable[None] | None]) -> None:
        """Serve until cancelled; ``ready`` is called once the URL is known."""
        self._reader = await asyncio.to_thread(RecordingReader, self.db_path)
        try:
            self.run_id = await self._read(lambda r: select_run(r, self.run_ref))
            self.scoring_id = await self._read(self._scoring)
            log.info("reading run %s for the page (once)", self.run_id)
            self._base = await self._read(lambda r: base_data(r, self.run_id, self.scoring_id))
            async with open_writer(self.db_path) as writer:
                self._writer = writer
                self._server = await asyncio.start_server(
                    self._connection, self.host, self.port, limit=MAX_HEAD
                )
                async with self._server:
                    maybe = ready(self)
                    if maybe is not None:
                        await maybe
                    await self._server.serve_forever()
        finally:
            self._reader.close()

    def _scoring(self, reader: RecordingReader) -> str | None:
        if self.scoring_ref:
            found = resolve_scoring(reader, self.scoring_ref)
            if found.run_id != self.run_id:
                raise LabelError(f"scoring {found.scoring_id} belongs to run {found.run_id}")
            return found.scoring_id
        current = current_scoring(reader, self.run_id)
        return current.scoring_id if current else None

    async def _connection(self, sr: asyncio.StreamReader, sw: asyncio.StreamWriter) -> None:
        head = False
        try:
            try:
                request = await read_request(sr)
                head = request.method == "HEAD"
                response = await self._route(request)
            except BadRequest as exc:
                response = json_response(exc.status, {"error": str(exc)})
            except Exception:
                log.exception("review: request failed")
                response = json_response(500, {"error": "internal error; see the server's log"})
            await write_response(sw, response, head)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the browser went away
        finally:
            sw.close()
            with contextlib.suppress(ConnectionError):
                await sw.wait_closed()

    def _allowed(self, request: Request) -> bool:
        given = request.headers.get("x-vae-token") or request.param("token")
        if not secrets.compare_digest(given.encode(), self.token.encode()):
            return False
        if not is_loopback(self.host):
            return True
        host = request.headers.get("host", "").rsplit(":", 1)[0]
        return is_loopback(host)

    async def _route(self, request: Request) -> Response:
        if not self._allowed(request):
            return json_response(403, {"error": "wrong or missing token (use the URL vae "
                                                "review printed)"})  # fmt: skip
        if request.path == "/" and request.method in ("GET", "HEAD"):
            html = await self._read(self._page)
            return Response(200, html.encode(), "text/html; charset=utf-8")
        if request.path.startswith("/audio/") and request.method in ("GET", "HEAD"):
            return await self._audio_file(request)
        if request.path.startswith("/session/") and request.method in ("GET", "HEAD"):
            return await self._details(unquote(request.path.removeprefix("/session/")))
        if request.path == "/labels":
            if request.method == "POST":
                return await self._post_label(request)
            if request.method == "GET":
                labels = await self._read(lambda r: r.labels(self.run_id))
                return json_response(200, [_label_json(x) for x in labels])
            return json_response(405, {"error": "GET or POST"})
        return json_response(404, {"error": f"no page {request.path}"})

    def _page(self, reader: RecordingReader) -> str:
        """The page with the labels as they are now (the rest is computed once)."""
        if self._base is None:
            self._base = base_data(reader, self.run_id, self.scoring_id)
        return render_review(review_data(reader, self._base, self.labeller, self.token))

    async def _details(self, sid: str) -> Response:
        """A session's details, rendered from what was read at start (no store read; in
        turn with the page's own reads, which update the same data)."""
        base = self._base
        assert base is not None
        html = await self._read(lambda _reader: session_details(base, sid, self.token))
        if html is None:
            return json_response(404, {"error": "no such session in this run"})
        return Response(200, html.encode(), "text/html; charset=utf-8")

    async def _audio_file(self, request: Request) -> Response:
        sid = unquote(request.path.removeprefix("/audio/"))
        if sid not in self._audio:
            self._audio[sid] = await self._read(lambda r: self._session_audio(r, sid))
        found = self._audio[sid]
        if found is None:
            return json_response(404, {"error": "no audio recorded for this session"})
        return byte_range(request, *found)

    def _session_audio(self, reader: RecordingReader, sid: str) -> tuple[bytes, str] | None:
        """The session's player file, for the latest attempts of this run only."""
        if sid not in {s.session_id for s in reader.latest_attempts(self.run_id).values()}:
            return None
        return session_audio(reader, sid)

    async def _post_label(self, request: Request) -> Response:
        if not request.headers.get("content-type", "").startswith("application/json"):
            return json_response(400, {"error": "send the label as application/json"})
        try:
            body = json.loads(request.body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return json_response(400, {"error": "the body is not JSON"})
        if not isinstance(body, dict):
            return json_response(400, {"error": "the body must be a JSON object"})
        kind = body.get("kind", "session")
        assertion = body.get("assertion") if kind == "assertion" else None
        signal = body.get("signal") if kind == "signal" else None
        if kind not in ("session", "signal", "assertion") or (
            signal is not None and not isinstance(signal, str)
        ):
            return json_response(400, {"error": "kind: session, signal or assertion"})

        def build(reader: RecordingReader) -> LabelRecord:
            scoring = reader.scoring(self.scoring_id) if self.scoring_id else None
            return make_label(reader, self.run_id, str(body.get("session_id", "")),
                              body.get("verdict"), signal=signal, assertion=assertion,
                              note=body.get("note", ""), by=self.labeller,
                              scoring=scoring)  # fmt: skip

        try:
            label = await self._read(build)
        except LabelError as exc:
            return json_response(400, {"error": str(exc)})
        assert self._writer is not None
        await self._writer.add_labels([label])
        await self._writer.flush()
        log.info("label: %s %s %s by %s", label.session_id, label.item, label.verdict,
                 label.labeller)  # fmt: skip
        return json_response(200, _label_json(label))


def _label_json(x: LabelRecord) -> dict[str, Any]:
    return {"session_id": x.session_id, "item": x.item, "kind": str(x.kind),
            "signal": x.signal, "assertion": x.assertion, "verdict": str(x.verdict),
            "note": x.note, "by": x.labeller, "at_ns": x.created_ns}  # fmt: skip
