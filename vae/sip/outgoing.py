"""Placing a call (RFC 3261 §13.2): INVITE with an SDP offer, digest on 401/407, CANCEL, ACK.

:func:`place_call` sends the INVITE (PCMU and PCMA with telephone-event,
the caller's extra headers, ``Recv-Info`` for the INFO packages vae takes)
and waits for the answer within ``ring_timeout_s``:

- 401/407: answered once with digest credentials (a new INVITE, CSeq + 1);
  a second challenge, a 403 to the credentials, or a challenge with no
  credentials to give is :class:`CallFailed` with ``auth=True``;
- another final response 3xx–6xx: :class:`CallFailed` with its code;
- no final answer within the ring timeout: CANCEL (once it rang; an INVITE
  that got no provisional answer may not be cancelled, RFC 3261 §9.1: its
  retransmissions stop), :class:`CallFailed` 408 with ``ring_timeout=True``;
  no answer at all from the far end (Timer B): 408 likewise;
- the caller's task cancelled (a cancelled run): CANCEL the same way, and a
  2xx that still arrives is acknowledged and hung up at once by the agent;
- 2xx: ACK, the SDP answer negotiated (one vae cannot use is ACKed, hung up
  and :class:`CallFailed` 488), the RTP stream connected, the :class:`Call`.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable

from vae.sip import digest, sdp
from vae.sip.agent import UserAgent, peer_of
from vae.sip.call import Call, Placed
from vae.sip.dialog import ack_for, dialog_from_response, fresh_via
from vae.sip.media import RtpStream
from vae.sip.messages import header_items, new_tag, request, to_bytes, uri_of
from vae.sip.sipmsg import Request, Response
from vae.sip.transport import Peer

#: Seconds the INVITE's final answer is still awaited after a CANCEL.
CANCEL_WAIT_S = 2.0


class CallFailed(Exception):
    """The call was not set up: the SIP ``code`` (408 for timeouts) and what happened."""

    def __init__(self, code: int, phrase: str, detail: str, *, auth: bool = False,
                 ring_timeout: bool = False, unusable: bool = False) -> None:  # fmt: skip
        super().__init__(f"{code} {phrase}: {detail}" if code else detail)
        self.code, self.phrase, self.detail = code, phrase, detail
        self.auth, self.ring_timeout, self.unusable = auth, ring_timeout, unusable


async def place_call(
    agent: UserAgent,
    target: str,
    peer: Peer,
    *,
    headers: list[tuple[str, str]] | None = None,
    credentials: digest.Credentials | None = None,
    ring_timeout_s: float = 60.0,
    accept_info: tuple[str, ...] = (),
    jitter_ms: int = 60,
    on_ringing: Callable[[int], None] | None = None,
) -> Call:
    media = await RtpStream(agent.host, lambda n: None, jitter_ms=jitter_ms).open()
    try:
        return await _invite(agent, target, peer, media, headers or [], credentials,
                             ring_timeout_s, accept_info, on_ringing)  # fmt: skip
    except BaseException:
        media.close()
        raise


async def _invite(
    agent: UserAgent,
    target: str,
    peer: Peer,
    media: RtpStream,
    headers: list[tuple[str, str]],
    credentials: digest.Credentials | None,
    ring_timeout_s: float,
    accept_info: tuple[str, ...],
    on_ringing: Callable[[int], None] | None,
) -> Call:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + ring_timeout_s
    local = f"<sip:{agent.user}@{agent.address()}:{agent.port}>;tag={new_tag()}"
    session = secrets.randbits(31)
    body = sdp.offer(media.host, media.port, session)
    call_id = f"{secrets.token_hex(12)}@vae"
    extra = [("Allow", agent.ALLOW), ("User-Agent", agent.user_agent), *headers]
    if accept_info:
        extra.append(("Recv-Info", ", ".join(accept_info)))
    auth: list[tuple[str, str]] = []
    cseq = 1
    while True:
        invite = request("INVITE", target, via=agent.via(peer), from_=local, to=f"<{target}>",
                         call_id=call_id, cseq=cseq, contact=agent.contact(peer),
                         headers=extra + auth, body=body,
                         content_type="application/sdp")  # fmt: skip
        placed = agent.placed[call_id] = Placed(invite, peer)
        try:
            placed.tx = tx = await agent.layer.request(invite, peer)
        except ConnectionError as exc:
            agent.placed.pop(call_id, None)
            raise CallFailed(0, "", f"cannot reach {peer}: {exc}") from exc
        if on_ringing is not None:
            tx.on_provisional = lambda r: on_ringing(r.code)
        try:
            resp = await asyncio.wait_for(asyncio.shield(tx.final), max(deadline - loop.time(), 0))
        except TimeoutError:
            agent.abandon(placed)
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(tx.final), CANCEL_WAIT_S)
            raise CallFailed(
                408,
                "Request Timeout",
                f"no answer within the ring timeout of {ring_timeout_s:g} s (cancelled)",
                ring_timeout=True,
            ) from None
        except asyncio.CancelledError:
            agent.abandon(placed)
            raise
        if tx.timed_out:
            agent.placed.pop(call_id, None)
            raise CallFailed(408, "Request Timeout", f"no response from {peer} to the INVITE")
        if resp.code in (401, 407):
            agent.placed.pop(call_id, None)
            auth = [_authorize(resp.code, resp.headers.get(
                "WWW-Authenticate" if resp.code == 401 else "Proxy-Authenticate"),
                target, credentials, bool(auth), resp.phrase)]  # fmt: skip
            cseq += 1
            continue
        if resp.code >= 300:
            agent.placed.pop(call_id, None)
            detail = f"the far end answered {resp.code} {resp.phrase}"
            raise CallFailed(resp.code, resp.phrase, detail, auth=resp.code == 403 and bool(auth))
        return _established(agent, invite, resp, placed, media, local, session, accept_info)


def _authorize(code: int, challenge: str | None, target: str,
               credentials: digest.Credentials | None, tried: bool, phrase: str
               ) -> tuple[str, str]:  # fmt: skip
    if credentials is None:
        raise CallFailed(code, phrase, "the far end asks for credentials and none were given "
                         "(--sip-username/--sip-password)", auth=True)  # fmt: skip
    if tried:
        raise CallFailed(code, phrase, "the far end refused the credentials given (challenged "
                         "again)", auth=True)  # fmt: skip
    if not challenge:
        raise CallFailed(code, phrase, "a challenge without its Authenticate header", auth=True)
    try:
        value = digest.answer(challenge, "INVITE", target, credentials)
    except digest.DigestError as exc:
        raise CallFailed(code, phrase, str(exc), auth=True) from exc
    return ("Authorization" if code == 401 else "Proxy-Authorization", value)


def _established(agent: UserAgent, invite: Request, resp: Response, placed: Placed,
                 media: RtpStream, local: str, session: int, accept_info: tuple[str, ...]
                 ) -> Call:  # fmt: skip
    dialog = dialog_from_response(invite, resp, local)
    first = uri_of(dialog.route[0]) if dialog.route else ""
    if first:
        peer = peer_of(first, placed.peer.transport)
    elif placed.peer.transport == "tcp":
        peer = placed.peer  # the connection the INVITE went on
    else:
        peer = peer_of(dialog.remote_target, placed.peer.transport)
    placed.ack = to_bytes(ack_for(invite, dialog, fresh_via(agent.via(peer))))
    agent.transport.send_now(placed.ack, peer)
    call = Call(agent, dialog, peer, media, invite, outbound=True, accept_info=accept_info,
                peer_accepts_info=header_items(resp.headers.get("Recv-Info")),
                sdp_session=session)  # fmt: skip
    agent.calls[call.key] = call
    try:
        agreed = sdp.choose(sdp.parse(resp.body))
    except sdp.SdpError as exc:
        call.bye_now("the far end's SDP answer is unusable")
        call.close()
        raise CallFailed(488, "Not Acceptable Here", f"the far end answered with SDP vae cannot "
                         f"use: {exc}", unusable=True) from exc  # fmt: skip
    media.connect(agreed)
    return call
