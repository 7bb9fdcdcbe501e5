"""A SIP user agent on one host and port: places calls, takes calls, registers.

:class:`UserAgent` owns a :class:`~vae.sip.transport.SipTransport` and its
transaction layer and routes what arrives: responses to their client
transactions, retransmitted requests to their server transactions, in-dialog
requests to their :class:`~vae.sip.call.Call`, new INVITEs to
``on_invite`` (as an :class:`~vae.sip.incoming.IncomingCall` the owner rings, answers or
rejects), CANCEL to the INVITE it cancels. Requests it refuses
(:class:`~vae.sip.messages.BadMessage`) are answered 400/513 where a Via
allows it and reported to ``on_refused``; a stray request gets 481.

:func:`vae.sip.outgoing.place_call` places a call through it. Every address vae
writes into Via, Contact and SDP is the host the agent is bound to, so an
agent bound to loopback advertises loopback only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from vae import __version__
from vae.sip import sdp
from vae.sip.call import Call, Placed
from vae.sip.dialog import ack_for, cancel_for, dialog_from_response, fresh_via, in_dialog
from vae.sip.incoming import IncomingCall
from vae.sip.messages import BadMessage, SipMessage, new_branch, new_tag, response, tag_of, to_bytes
from vae.sip.sipmsg import URI, Request, Response
from vae.sip.transactions import LINGER_S, ClientTransaction, ServerTransaction, TransactionLayer
from vae.sip.transport import Peer, SipTransport

log = logging.getLogger("vae.sip.agent")
#: Seconds a closing agent waits for the answers to the calls it cancelled.
CANCEL_WAIT_S = 2.0


def peer_of(uri: str, transport: str = "udp") -> Peer:
    """Where to send a request for ``uri`` (its host, port 5060 by default, its transport)."""
    parsed = URI.parse(uri)
    wanted = str(parsed.parameters.get("transport") or transport).lower()
    return Peer(wanted, parsed.host.strip("[]"), parsed.port or 5060)


class UserAgent:
    ALLOW = "INVITE, ACK, CANCEL, BYE, INFO, OPTIONS"

    def __init__(
        self,
        host: str,
        port: int = 0,
        *,
        user: str = "vae",
        on_invite: Callable[[IncomingCall], None] | None = None,
        on_refused: Callable[[str, Peer], None] | None = None,
    ) -> None:
        self.host, self.user = host, user
        self.on_invite, self.on_refused = on_invite, on_refused
        self.transport = SipTransport(host, port, self._message, self._refused)
        self.layer = TransactionLayer(self.transport)
        self.calls: dict[tuple[str, str], Call] = {}
        self.incoming: dict[tuple[str, str], IncomingCall] = {}
        #: INVITEs we sent, by Call-ID (see :class:`~vae.sip.call.Placed`).
        self.placed: dict[str, Placed] = {}
        self.user_agent = f"vae/{__version__}"

    @property
    def port(self) -> int:
        return self.transport.port

    async def start(self) -> UserAgent:
        await self.transport.start()
        return self

    async def __aenter__(self) -> UserAgent:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def address(self) -> str:
        return f"[{self.host}]" if ":" in self.host else self.host

    def via(self, peer: Peer) -> str:
        return f"SIP/2.0/{peer.transport.upper()} {self.address()}:{self.port};branch=" \
               f"{new_branch()};rport"  # fmt: skip

    def contact(self, peer: Peer) -> str:
        suffix = ";transport=tcp" if peer.transport == "tcp" else ""
        return f"<sip:{self.user}@{self.address()}:{self.port}{suffix}>"

    def forget(self, call: Call) -> None:
        self.calls.pop(call.key, None)
        self.placed.pop(call.dialog.call_id, None)

    # ------------------------------------------------------------------ inbound
    def _refused(self, exc: BadMessage, peer: Peer, head: bytes) -> None:
        first = head.split(b"\r\n", 1)[0][:80].decode("utf-8", "replace")
        what = f"refused a SIP message from {peer} ({first!r}): {exc.problem}"
        log.warning("%s", what)
        if exc.request is not None:
            self.transport.send_now(to_bytes(response(exc.request, exc.status)), peer)
        if self.on_refused is not None:
            self.on_refused(what, peer)

    def _message(self, message: SipMessage, peer: Peer) -> None:
        if isinstance(message, Response):
            self._response(message)
            return
        req = message
        existing = self.layer.existing(req)
        if existing is not None:
            existing.retransmitted(req)
            return
        to_tag = tag_of(req.headers.get("To"))
        call = self.calls.get((req.call_id, to_tag)) if to_tag else None
        if req.method == "ACK":
            if call is not None:
                call.handle(req, self.layer.server(req, peer))
            return
        tx = self.layer.server(req, peer)
        if req.method == "CANCEL":
            self._cancel(req, tx)
        elif call is not None:
            call.handle(req, tx)
        elif to_tag:
            tx.respond(481)
        elif req.method == "INVITE":
            self._invite(req, tx)
        elif req.method == "OPTIONS":
            tx.respond(200, headers=[("Allow", self.ALLOW), ("Accept", "application/sdp")])
        else:
            tx.respond(481 if req.method in ("BYE", "INFO") else 405,
                       headers=[("Allow", self.ALLOW)])  # fmt: skip

    def _invite(self, req: Request, tx: ServerTransaction) -> None:
        tx.respond(100)
        if self.on_invite is None:
            tx.respond(480, to_tag=new_tag(), phrase="Not Taking Calls")
            return
        if not req.body:
            tx.respond(488, to_tag=new_tag(), headers=[("Warning", '399 vae "no SDP offer"')])
            return
        try:
            offer = sdp.parse(req.body)
            sdp.choose(offer)
        except sdp.SdpError as exc:
            tx.respond(488, to_tag=new_tag(), headers=[("Warning", f'399 vae "{exc}"')])
            what = f"refused an INVITE from {tx.peer} with 488: {exc}"
            log.info("%s", what)
            if self.on_refused is not None:
                self.on_refused(what, tx.peer)
            return
        incoming = IncomingCall(self, req, tx, offer)
        self.incoming[incoming.key] = incoming
        self.on_invite(incoming)

    def _cancel(self, req: Request, tx: ServerTransaction) -> None:
        key = (req.call_id, tag_of(req.headers.get("From")))
        incoming = self.incoming.get(key)
        branch = str(req.via[0].parameters.get("branch") or "")
        ours = incoming is not None and incoming.invite.via[0].parameters.get("branch") == branch
        if incoming is None or not ours:
            tx.respond(481)
            return
        tx.respond(200)
        incoming.reject(487)

    def _response(self, resp: Response) -> None:
        if not self.layer.response(resp):
            log.debug("stray response %s %s", resp.code, resp.call_id)
        if resp.cseq.method == "INVITE" and 200 <= resp.code < 300:
            self._invite_ok(resp)

    def _invite_ok(self, resp: Response) -> None:
        """A 2xx to an INVITE of ours, again: ACK it again, or ACK and BYE a call we gave up."""
        placed = self.placed.get(resp.call_id)
        if placed is None:
            return
        if placed.ack is not None:
            self.transport.send_now(placed.ack, placed.peer)
        elif placed.orphan:
            placed.ack = b""  # once
            dialog = dialog_from_response(placed.invite, resp, placed.invite.headers["From"])
            via = fresh_via(self.via(placed.peer))
            self.transport.send_now(to_bytes(ack_for(placed.invite, dialog, via)), placed.peer)
            bye = in_dialog("BYE", dialog, fresh_via(via), dialog.local_cseq + 1)
            try:
                self.request_now(bye, placed.peer)
            except ConnectionError:
                log.warning("could not hang up the abandoned call %s", resp.call_id)

    def abandon(self, placed: Placed) -> None:
        """Give up on a placed call: CANCEL it if it rang, and hang up a late answer."""
        placed.orphan = True
        call_id = placed.invite.call_id

        def forget() -> None:  # a late answer has had its chance
            if self.placed.get(call_id) is placed:
                del self.placed[call_id]

        asyncio.get_running_loop().call_later(LINGER_S, forget)
        tx = placed.tx
        if tx is None or tx.final.done():
            return
        if tx.provisional_seen:
            try:
                self.request_now(cancel_for(placed.invite), placed.peer)
            except ConnectionError:
                log.warning("could not CANCEL %s", placed.invite.call_id)
        # without a provisional answer a CANCEL may not be sent (RFC 3261 §9.1): the INVITE's
        # own retransmissions stop, and an answer that still comes is hung up (above)

    def request_now(self, req: Request, peer: Peer) -> ClientTransaction:
        """Send ``req`` at once on an open way to ``peer`` (UDP, or a TCP link already up)."""
        tx = ClientTransaction(self.layer, req, peer)
        if not self.transport.send_now(tx.data, peer):
            raise ConnectionError(f"no open way to {peer}")
        self.layer.clients[(str(req.via[0].parameters.get("branch")), req.method)] = tx
        tx.start()
        return tx

    async def close(self) -> None:
        """Hang up every call still up, refuse every call still ringing, then close."""
        for call in list(self.calls.values()):
            call.bye_now("the SIP user agent is closing")
            call.close()
        for incoming in list(self.incoming.values()):
            incoming.reject(480, "Shutting Down")
        waiting = []
        for placed in list(self.placed.values()):
            if placed.ack is None:
                self.abandon(placed)
                if placed.tx is not None and not placed.tx.final.done():
                    waiting.append(placed.tx.final)
        if waiting:  # a 2xx crossing our CANCEL is still ACKed and hung up before we go
            await asyncio.wait(waiting, timeout=CANCEL_WAIT_S)
        await asyncio.sleep(0)  # let the last datagrams leave
        self.layer.close()
        await self.transport.close()
