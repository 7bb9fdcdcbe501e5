"""Client and server transactions (RFC 3261 §17): retransmissions, matching, timeouts.

Why vae's own: the transaction layer is where a SIP stack meets the event
loop, and vae's must run on asyncio with no thread and no task of its own;
here every timer is a ``loop.call_later`` handle and every outcome a future.

Client side (:class:`ClientTransaction`): over UDP a request is sent again
after T1, 2·T1, … (INVITE: until a provisional response; others: capped at
T2, until a final one); no final response within 64·T1 (Timer B/F) ends it
with a synthetic ``408`` (``timed_out``). A non-2xx final answer to an INVITE
is acknowledged here (same branch), also each time it is retransmitted; a
2xx is the dialog's to acknowledge. Server side (:class:`ServerTransaction`):
a retransmitted request is answered with the last response again; a non-2xx
final answer to an INVITE over UDP is retransmitted (Timer G) until its ACK,
for at most 64·T1 (Timer H). Finished transactions linger 32 s (Timers D, J,
K) to absorb retransmissions, then are forgotten.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from vae.sip.messages import response, to_bytes
from vae.sip.sipmsg import Request, Response
from vae.sip.transport import Peer, SipTransport

if TYPE_CHECKING:
    from asyncio import TimerHandle

T1 = 0.5
T2 = 4.0
LINGER_S = 32.0


def _key(message: Request | Response) -> tuple[str, str]:
    via = message.via[0]
    method = message.cseq.method
    return str(via.parameters.get("branch") or ""), "INVITE" if method == "ACK" else method


class ClientTransaction:
    def __init__(self, layer: TransactionLayer, request: Request, peer: Peer) -> None:
        self.layer, self.request, self.peer = layer, request, peer
        self.method = request.method
        self.data = to_bytes(request)
        self.final: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self.on_provisional: Callable[[Response], None] | None = None
        self.timed_out = False
        self.provisional_seen = False
        self._interval = T1
        self._retransmit: TimerHandle | None = None
        self._give_up: TimerHandle | None = None

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        if self.peer.transport == "udp":
            self._retransmit = loop.call_later(self._interval, self._again)
        self._give_up = loop.call_later(64 * T1, self._timeout)

    def _again(self) -> None:
        if self.final.done() or (self.method == "INVITE" and self.provisional_seen):
            return
        self.layer.transport.send_now(self.data, self.peer)
        self._interval = (
            self._interval * 2 if self.method == "INVITE" else min(self._interval * 2, T2)
        )
        self._retransmit = asyncio.get_running_loop().call_later(self._interval, self._again)

    def _timeout(self) -> None:
        if not self.final.done():
            self.timed_out = True
            self.final.set_result(Response(408, "Request Timeout (no response)"))
        self._finish()

    def receive(self, resp: Response) -> None:
        if resp.code < 200:
            self.provisional_seen = True
            if self.on_provisional is not None and not self.final.done():
                self.on_provisional(resp)
            return
        if self.method == "INVITE" and resp.code >= 300:
            self.layer.transport.send_now(to_bytes(self._ack(resp)), self.peer)
        if not self.final.done():
            self.final.set_result(resp)
            self._finish()

    def _ack(self, resp: Response) -> Request:
        """The ACK of a non-2xx final response: same branch, the response's To."""
        ack = Request("ACK", self.request.uri)
        ack.headers.add("Via", self.request.headers.getlist("Via")[0])
        ack.headers.add("Max-Forwards", "70")
        for name in ("From", "Call-ID"):
            ack.headers.add(name, self.request.headers[name])
        ack.headers.add("To", resp.headers.get("To") or self.request.headers["To"])
        ack.headers.add("CSeq", f"{self.request.cseq.sequence} ACK")
        for name in ("Route",):
            for value in self.request.headers.getlist(name):
                ack.headers.add(name, value)
        return ack

    def _finish(self) -> None:
        for handle in (self._retransmit, self._give_up):
            if handle is not None:
                handle.cancel()
        self.layer.forget_later(self.layer.clients, _key(self.request), self)

    def abandon(self) -> None:
        """Stop retransmitting and waiting (the caller gave up on the request)."""
        if not self.final.done():
            self.final.cancel()
        self._finish()


class ServerTransaction:
    def __init__(self, layer: TransactionLayer, request: Request, peer: Peer) -> None:
        self.layer, self.request, self.peer = layer, request, peer
        self.last: bytes | None = None
        self.final_code = 0
        self.acked = False
        self._retransmit: TimerHandle | None = None
        self._give_up: TimerHandle | None = None

    def respond(self, code: int, **kwargs: object) -> Response:
        resp = response(self.request, code, **kwargs)  # type: ignore[arg-type]
        self.send(resp)
        return resp

    def send(self, resp: Response) -> None:
        if self.final_code >= 200:
            return  # one final response per transaction
        self.last = to_bytes(resp)
        self.layer.transport.send_now(self.last, self.peer)
        if resp.code < 200:
            return
        self.final_code = resp.code
        loop = asyncio.get_running_loop()
        invite = self.request.method == "INVITE"
        if invite and resp.code >= 300 and self.peer.transport == "udp":
            self._interval = T1
            self._retransmit = loop.call_later(T1, self._again)
            self._give_up = loop.call_later(64 * T1, self._stop)
        self.layer.forget_later(self.layer.servers, self.key, self)

    @property
    def key(self) -> tuple[str, str, str]:
        branch, method = _key(self.request)
        via = self.request.via[0]
        return branch, method, f"{via.host}:{via.port}"

    def _again(self) -> None:
        if self.acked or self.last is None:
            return
        self.layer.transport.send_now(self.last, self.peer)
        self._interval = min(self._interval * 2, T2)
        self._retransmit = asyncio.get_running_loop().call_later(self._interval, self._again)

    def _stop(self) -> None:
        self.acked = True
        for handle in (self._retransmit, self._give_up):
            if handle is not None:
                handle.cancel()

    def retransmitted(self, req: Request) -> None:
        """The same request again, or the ACK of our non-2xx final response."""
        if req.method == "ACK":
            self._stop()
        elif self.last is not None:
            self.layer.transport.send_now(self.last, self.peer)


class TransactionLayer:
    def __init__(self, transport: SipTransport) -> None:
        self.transport = transport
        self.clients: dict[tuple[str, str], ClientTransaction] = {}
        self.servers: dict[tuple[str, str, str], ServerTransaction] = {}
        self._linger: set[TimerHandle] = set()

    async def request(self, req: Request, peer: Peer) -> ClientTransaction:
        """Send ``req`` to ``peer`` in a new client transaction (await its ``final``)."""
        tx = ClientTransaction(self, req, peer)
        self.clients[_key(req)] = tx
        try:
            await self.transport.send(tx.data, peer)
        except OSError as exc:
            del self.clients[_key(req)]
            raise ConnectionError(f"cannot send {req.method} to {peer}: {exc}") from exc
        tx.start()
        return tx

    def response(self, resp: Response) -> bool:
        """Hand ``resp`` to its client transaction; False when none matches (a stray)."""
        tx = self.clients.get(_key(resp))
        if tx is None:
            return False
        tx.receive(resp)
        return True

    def existing(self, req: Request) -> ServerTransaction | None:
        branch, method = _key(req)
        via = req.via[0]
        return self.servers.get((branch, method, f"{via.host}:{via.port}"))

    def server(self, req: Request, peer: Peer) -> ServerTransaction:
        tx = ServerTransaction(self, req, peer)
        if req.method != "ACK":
            self.servers[tx.key] = tx
        return tx

    def forget_later(self, table: dict, key: object, tx: object) -> None:  # type: ignore[type-arg]
        loop = asyncio.get_running_loop()

        def forget() -> None:
            self._linger.discard(handle)
            if table.get(key) is tx:
                del table[key]

        handle = loop.call_later(LINGER_S, forget)
        self._linger.add(handle)

    def close(self) -> None:
        for handle in self._linger:
            handle.cancel()
        self._linger.clear()
        for tx in list(self.clients.values()):
            tx.abandon()
