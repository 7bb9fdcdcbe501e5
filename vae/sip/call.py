"""One established call: its dialog (RFC 3261 §12) and its RTP stream, in either direction.

A :class:`Call` is made by the user agent (:mod:`.agent`) when an INVITE it
sent was answered or one it received was accepted. It sends in-dialog
requests (``BYE``, ``INFO``) one at a time, answers the peer's (``BYE``
ends the call as the peer's hang-up, ``INFO`` of a package vae accepts is
queued, a re-INVITE moves the media and is answered with vae's SDP, others
get 501), and retransmits its own 2xx to an INVITE until the ACK comes.

What happens reaches the owner as :data:`CallEvent` items on
:attr:`Call.events`: :class:`Info`, :class:`~vae.sip.media.MediaNotice`,
:class:`Reinvited`, and last :class:`Hangup`. No task of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Protocol

from vae.sip import sdp
from vae.sip.dialog import Dialog
from vae.sip.media import MediaNotice, RtpStream
from vae.sip.messages import request, to_bytes
from vae.sip.sipmsg import Request, Response
from vae.sip.transactions import T1, T2, ClientTransaction, ServerTransaction, TransactionLayer
from vae.sip.transport import Peer, SipTransport

log = logging.getLogger("vae.sip.call")
#: Seconds a BYE or INFO waits for its answer before the call goes on without it.
REQUEST_WAIT_S = 5.0


@dataclass(frozen=True, slots=True)
class Info:
    package: str
    content_type: str
    body: bytes


@dataclass(frozen=True, slots=True)
class Reinvited:
    detail: str


@dataclass(frozen=True, slots=True)
class Hangup:
    """The call ended: ``by_peer`` (their BYE) or not (ours, or the media died)."""

    by_peer: bool
    reason: str


CallEvent = Info | MediaNotice | Reinvited | Hangup


class Owner(Protocol):
    """What a call needs of its user agent (:class:`vae.sip.agent.UserAgent`)."""

    ALLOW: str
    layer: TransactionLayer
    transport: SipTransport

    def via(self, peer: Peer) -> str: ...

    def contact(self, peer: Peer) -> str: ...

    def forget(self, call: Call) -> None: ...

    def request_now(self, req: Request, peer: Peer) -> ClientTransaction: ...


@dataclass
class Placed:
    """An INVITE vae sent, kept until its call is over: what to do when a 2xx comes again."""

    invite: Request
    peer: Peer
    tx: ClientTransaction | None = None
    #: Our ACK of its 2xx, sent again each time the 2xx is retransmitted.
    ack: bytes | None = None
    #: vae gave up on the call (cancelled, timed out, shut down): a late 2xx gets ACK and BYE.
    orphan: bool = False


class Call:
    def __init__(
        self,
        agent: Owner,
        dialog: Dialog,
        peer: Peer,
        media: RtpStream,
        invite: Request,
        *,
        outbound: bool,
        accept_info: tuple[str, ...] = (),
        peer_accepts_info: tuple[str, ...] = (),
        sdp_session: int = 0,
    ) -> None:
        self.agent, self.dialog, self.peer, self.media = agent, dialog, peer, media
        #: The INVITE that set the call up (its headers: X-Vae-*, Recv-Info, ...).
        self.invite = invite
        self.outbound = outbound
        self.accept_info = accept_info
        self.peer_accepts_info = peer_accepts_info
        self.events: asyncio.Queue[CallEvent] = asyncio.Queue()
        self.hangup: Hangup | None = None
        self._lock = asyncio.Lock()
        self._sdp_session = sdp_session
        self._sdp_version = 1
        self._ok: bytes | None = None
        self._ok_timer: asyncio.TimerHandle | None = None
        media.on_notice = self._notice

    @property
    def key(self) -> tuple[str, str]:
        return self.dialog.call_id, self.dialog.local_tag

    def _notice(self, notice: MediaNotice) -> None:
        self.events.put_nowait(notice)

    # ------------------------------------------------------------- our requests
    def build(self, method: str, body: bytes = b"", content_type: str = "",
              headers: list[tuple[str, str]] | None = None, cseq: int = 0) -> Request:  # fmt: skip
        d = self.dialog
        if not cseq:
            d.local_cseq += 1
            cseq = d.local_cseq
        extra = [("Route", r) for r in d.route] + list(headers or [])
        return request(
            method, d.remote_target, via=self.agent.via(self.peer), from_=d.local,
            to=d.remote, call_id=d.call_id, cseq=cseq, contact=self.agent.contact(self.peer),
            headers=extra, body=body, content_type=content_type,
        )  # fmt: skip

    async def _send(self, req: Request) -> int:
        """Send an in-dialog request and wait (bounded) for its final answer's code."""
        async with self._lock:  # one at a time: the peer sees CSeq in order
            try:
                tx = await self.agent.layer.request(req, self.peer)
            except ConnectionError as exc:
                log.info("%s %s: %s", self.dialog.call_id, req.method, exc)
                return 503
            try:
                resp = await asyncio.wait_for(asyncio.shield(tx.final), REQUEST_WAIT_S)
            except TimeoutError:
                tx.abandon()
                return 408
            return resp.code

    async def info(self, package: str, body: bytes, content_type: str) -> int:
        """Send an INFO of ``package`` (RFC 6086); its final status (0: the call is over)."""
        if self.hangup is not None:
            return 0
        req = self.build("INFO", body, content_type, [("Info-Package", package)])
        return await self._send(req)

    async def bye(self, reason: str = "vae ended the call") -> None:
        """Hang up (once); the peer's answer is waited for, briefly."""
        if self.hangup is not None:
            return
        self._end(Hangup(False, reason))
        await self._send(self.build("BYE"))

    def bye_now(self, reason: str) -> None:
        """Hang up without waiting (shutdown paths): the BYE goes out in its transaction."""
        if self.hangup is None:
            self._end(Hangup(False, reason))
            with contextlib.suppress(ConnectionError):
                self.agent.request_now(self.build("BYE"), self.peer)

    # ---------------------------------------------------------- their requests
    def handle(self, req: Request, tx: ServerTransaction) -> None:
        d = self.dialog
        if req.method != "ACK":
            if req.cseq.sequence <= d.remote_cseq:
                tx.respond(500, phrase="CSeq Out Of Order")
                return
            d.remote_cseq = req.cseq.sequence
        if req.method == "BYE":
            tx.respond(200)
            self._end(Hangup(True, "the peer sent BYE"))
        elif req.method == "INFO":
            package = (req.headers.get("Info-Package") or "").strip()
            if package not in self.accept_info:
                tx.respond(469, headers=[("Recv-Info", ", ".join(self.accept_info))])
                return
            tx.respond(200)
            ctype = req.headers.get("Content-Type") or ""
            self.events.put_nowait(Info(package, ctype, req.body))
        elif req.method == "INVITE":
            self._reinvite(req, tx)
        elif req.method == "ACK":
            self.acked()
        elif req.method == "OPTIONS":
            tx.respond(200, headers=[("Allow", self.agent.ALLOW)])
        else:
            tx.respond(501)

    def _reinvite(self, req: Request, tx: ServerTransaction) -> None:
        if self.hangup is not None:
            tx.respond(481)
            return
        detail = "re-INVITE without SDP: media unchanged"
        if req.body:
            try:
                agreed = sdp.choose(sdp.parse(req.body))
            except sdp.SdpError as exc:
                tx.respond(488, headers=[("Warning", f'399 vae "{exc}"')])
                return
            self.media.connect(agreed)
            detail = f"re-INVITE: media now {agreed.codec} to {agreed.remote_host}:" \
                     f"{agreed.remote_port}"  # fmt: skip
        self._sdp_version += 1
        assert self.media.negotiated is not None
        n = self.media.negotiated
        body = sdp.describe(self.media.host, self.media.port, (n.payload_type,),
                            self._sdp_session, self._sdp_version, n.dtmf_payload_type)  # fmt: skip
        ok = tx.respond(200, to_tag=self.dialog.local_tag, body=body,
                        content_type="application/sdp",
                        headers=[("Contact", self.agent.contact(self.peer))])  # fmt: skip
        self.send_ok_until_ack(ok)
        self.events.put_nowait(Reinvited(detail))

    # --------------------------------------------------- 2xx until the ACK
    def send_ok_until_ack(self, ok: Response) -> None:
        self._ok = to_bytes(ok)
        if self.peer.transport == "udp":
            self._retransmit_ok(T1, 0.0)

    def _retransmit_ok(self, interval: float, waited: float) -> None:
        if self._ok is None:
            return
        if waited >= 64 * T1:
            self._ok = None
            log.warning("%s: no ACK for our 200 OK within %g s", self.dialog.call_id, waited)
            return

        def again() -> None:
            if self._ok is not None:
                self.agent.transport.send_now(self._ok, self.peer)
                self._retransmit_ok(min(interval * 2, T2), waited + interval)

        self._ok_timer = asyncio.get_running_loop().call_later(interval, again)

    def acked(self) -> None:
        self._ok = None
        if self._ok_timer is not None:
            self._ok_timer.cancel()

    def _end(self, hangup: Hangup) -> None:
        if self.hangup is None:
            self.hangup = hangup
            self.acked()
            self.events.put_nowait(hangup)

    def close(self) -> None:
        """Forget the call (after a hang-up) and free its RTP port."""
        self.acked()
        self.media.close()
        self.agent.forget(self)
