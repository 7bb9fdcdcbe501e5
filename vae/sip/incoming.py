"""A call offered to vae: an INVITE waiting to be rung, answered or rejected.

The user agent (:mod:`.agent`) hands each new INVITE with a usable SDP offer
to its owner as an :class:`IncomingCall`; the owner decides. Answering is
where an offer becomes a call: vae's SDP answer on a fresh RTP stream, the
dialog set up from the INVITE (:mod:`.dialog`), the 200 OK retransmitted until
the ACK. Apart from the agent because it changes with how vae takes calls
(the answer, the INFO packages it accepts), not with how messages are routed.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Protocol

from vae.sip import sdp
from vae.sip.call import Call, Owner
from vae.sip.dialog import dialog_from_request
from vae.sip.media import RtpStream
from vae.sip.messages import header_items, new_tag, response, tag_of
from vae.sip.sipmsg import Request
from vae.sip.transactions import ServerTransaction


class Answerer(Owner, Protocol):
    """What an incoming call needs of its user agent (:class:`vae.sip.agent.UserAgent`)."""

    host: str
    calls: dict[tuple[str, str], Call]
    incoming: dict[tuple[str, str], IncomingCall]


class IncomingCall:
    """An INVITE waiting for the owner: :meth:`ring`, :meth:`answer` or :meth:`reject`."""

    def __init__(self, agent: Answerer, invite: Request, tx: ServerTransaction,
                 offer: sdp.MediaDescription) -> None:  # fmt: skip
        self.agent, self.invite, self.tx, self.offer = agent, invite, tx, offer
        self.local_tag = new_tag()
        #: Set when the caller CANCELled (or the INVITE was answered otherwise).
        self.gone = asyncio.Event()
        self.user = invite.uri.user or ""

    def header(self, name: str) -> str:
        return (self.invite.headers.get(name) or "").strip()

    def ring(self) -> None:
        if not self.gone.is_set():
            self.tx.respond(180, to_tag=self.local_tag)

    def reject(self, code: int, phrase: str = "", headers: list[tuple[str, str]] | None = None
               ) -> None:  # fmt: skip
        if not self.gone.is_set():
            self.gone.set()
            self.tx.respond(code, to_tag=self.local_tag, phrase=phrase, headers=headers)
            self.agent.incoming.pop(self.key, None)

    @property
    def key(self) -> tuple[str, str]:
        return self.invite.call_id, tag_of(self.invite.headers.get("From"))

    async def answer(self, *, accept_info: tuple[str, ...] = (), jitter_ms: int = 60) -> Call:
        """Accept: 200 OK with vae's SDP answer (retransmitted until the ACK)."""
        if self.gone.is_set():
            raise ConnectionError("the caller cancelled the call")
        media = await RtpStream(self.agent.host, lambda n: None, jitter_ms=jitter_ms).open()
        session = secrets.randbits(31)
        body, agreed = sdp.answer(self.offer, media.host, media.port, session)
        media.connect(agreed)
        dialog = dialog_from_request(self.invite, self.local_tag)
        peer_info = header_items(self.invite.headers.get("Recv-Info"))
        call = Call(self.agent, dialog, self.tx.peer, media, self.invite, outbound=False,
                    accept_info=accept_info, peer_accepts_info=peer_info,
                    sdp_session=session)  # fmt: skip
        headers = [("Contact", self.agent.contact(self.tx.peer)), ("Allow", self.agent.ALLOW)]
        if accept_info:
            headers.append(("Recv-Info", ", ".join(accept_info)))
        ok = response(self.invite, 200, to_tag=self.local_tag, body=body,
                      content_type="application/sdp", headers=headers)  # fmt: skip
        self.gone.set()
        self.agent.incoming.pop(self.key, None)
        self.agent.calls[call.key] = call
        self.tx.send(ok)
        call.send_ok_until_ack(ok)
        return call
