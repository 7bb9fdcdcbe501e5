"""A SIP dialog (RFC 3261 §12) and the requests built from it outside a call's own sends.

A dialog is what two user agents share once an INVITE is answered: the
Call-ID, both tags, the remote target, the route set and the CSeq numbers.
:func:`dialog_from_response` (a call vae placed) and
:func:`dialog_from_request` (a call vae accepted) set one up;
:func:`in_dialog`, :func:`ack_for` and :func:`cancel_for` build the requests
the user agent sends for a dialog without a :class:`~vae.sip.call.Call` in
hand (the ACK of a 2xx, a BYE to a call given up, a CANCEL). Apart from
:mod:`.call` because these follow the RFC's dialog rules, not what a call
does with its peer's requests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vae.sip.messages import new_branch, request, tag_of, uri_of
from vae.sip.sipmsg import Request, Response


@dataclass
class Dialog:
    call_id: str
    local_tag: str
    remote_tag: str
    #: name-addr values for From/To of our requests.
    local: str
    remote: str
    remote_target: str
    route: list[str] = field(default_factory=list)
    local_cseq: int = 1
    remote_cseq: int = 0


def dialog_from_response(invite: Request, ok: Response, local: str) -> Dialog:
    """The dialog a 2xx to our INVITE set up (RFC 3261 §12.1.2)."""
    contact = ok.headers.get("Contact")
    target = uri_of(contact) if contact else str(invite.uri)
    routes = list(reversed(ok.headers.getlist("Record-Route")))
    return Dialog(
        call_id=invite.call_id,
        local_tag=tag_of(invite.headers.get("From")),
        remote_tag=tag_of(ok.headers.get("To")),
        local=local,
        remote=ok.headers.get("To") or invite.headers["To"],
        remote_target=target,
        route=[r for value in routes for r in value.split(",")],
        local_cseq=invite.cseq.sequence,
    )


def dialog_from_request(invite: Request, local_tag: str) -> Dialog:
    """The dialog of an INVITE we accept (RFC 3261 §12.1.1)."""
    contact = invite.headers.get("Contact")
    to = invite.headers["To"]
    return Dialog(
        call_id=invite.call_id,
        local_tag=local_tag,
        remote_tag=tag_of(invite.headers.get("From")),
        local=to if ";tag=" in to else f"{to};tag={local_tag}",
        remote=invite.headers["From"],
        remote_target=uri_of(contact) if contact else str(invite.uri),
        route=list(invite.headers.getlist("Record-Route")),
        local_cseq=0,
        remote_cseq=invite.cseq.sequence,
    )


def in_dialog(method: str, dialog: Dialog, via: str, cseq: int) -> Request:
    """A request of ``dialog``: to the remote target, through the route set."""
    return request(
        method, dialog.remote_target, via=via, from_=dialog.local, to=dialog.remote,
        call_id=dialog.call_id, cseq=cseq, headers=[("Route", r) for r in dialog.route],
    )  # fmt: skip


def ack_for(invite: Request, dialog: Dialog, via: str) -> Request:
    """The ACK of a 2xx: a new transaction with the INVITE's CSeq number."""
    return in_dialog("ACK", dialog, via, invite.cseq.sequence)


def fresh_via(via: str) -> str:
    """``via`` with a new branch (a new transaction)."""
    head, _, _ = via.partition(";branch=")
    return f"{head};branch={new_branch()};rport"


def cancel_for(invite: Request) -> Request:
    """The CANCEL of ``invite``: its Via (same branch), From, To, Call-ID and CSeq number."""
    return request(
        "CANCEL", str(invite.uri), via=invite.headers.getlist("Via")[0],
        from_=invite.headers["From"], to=invite.headers["To"], call_id=invite.call_id,
        cseq=invite.cseq.sequence,
        headers=[("Route", r) for r in invite.headers.getlist("Route")],
    )  # fmt: skip
