"""SIP messages: parsed with vae's limits, built with the headers RFC 3261 requires.

Parsing and serialising header values is the ``sipmessage`` library's (a
maintained, typed parser of RFC 3261 grammar); what it leaves to its caller
is here, because a message from the network is hostile until proven
otherwise:

- size: a message over :data:`MAX_MESSAGE` bytes is refused (``513 Message
  Too Large``) before anything else is read;
- framing: folded header lines are unfolded; ``Content-Length`` must match
  the body of a datagram (a longer body is cut as RFC 3261 §18.3 says, a
  shorter one refused); on a stream it delimits the message (:mod:`.transport`);
- a start line that is neither a request nor a response, a header line
  without a colon, a value ``sipmessage`` cannot parse: ``400 Bad Request``;
- the mandatory headers (Via, From, To, Call-ID, CSeq, and Max-Forwards on a
  request) must be there and the CSeq method must be the request's.

:class:`BadMessage` carries the status to answer and, when the start line
and Via could be read, the request to answer it to (else the message is
dropped: there is nowhere to send a response).
"""

from __future__ import annotations

import re
import secrets

from vae.sip.sipmsg import URI, Message, Request, Response

MAX_MESSAGE = 60 * 1024
MANDATORY = ("Via", "From", "To", "Call-ID", "CSeq")
PHRASES = {
    100: "Trying", 180: "Ringing", 183: "Session Progress", 200: "OK",
    400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 407: "Proxy Authentication Required", 408: "Request Timeout",
    415: "Unsupported Media Type", 469: "Bad Info Package", 480: "Temporarily Unavailable",
    481: "Call/Transaction Does Not Exist", 486: "Busy Here", 487: "Request Terminated",
    488: "Not Acceptable Here", 500: "Server Internal Error", 501: "Not Implemented",
    503: "Service Unavailable", 513: "Message Too Large", 600: "Busy Everywhere",
    603: "Decline",
}  # fmt: skip
_REQUEST_LINE = re.compile(r"^([A-Za-z]+) (\S+) SIP/2\.0$")
_STATUS_LINE = re.compile(r"^SIP/2\.0 ([1-6]\d\d) (.*)$")

SipMessage = Request | Response


class BadMessage(ValueError):
    """A message vae refuses: ``status`` to answer, ``request`` to answer it to (if any)."""

    def __init__(self, status: int, problem: str, request: Request | None = None) -> None:
        super().__init__(problem)
        self.status = status
        self.problem = problem
        self.request = request


def new_branch() -> str:
    return "z9hG4bK" + secrets.token_hex(10)


def new_tag() -> str:
    return secrets.token_hex(8)


def unfold(head: bytes) -> bytes:
    """Header section with continuation lines joined (RFC 3261 §7.3.1)."""
    return re.sub(rb"\r\n[ \t]+", b" ", head)


def parse(data: bytes, stream: bool = False) -> SipMessage:
    """One message from the network; :class:`BadMessage` for anything vae refuses."""
    if len(data) > MAX_MESSAGE:
        raise BadMessage(513, f"message of {len(data)} bytes (at most {MAX_MESSAGE})")
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        raise BadMessage(400, "no blank line after the headers")
    head = unfold(head)
    try:
        first = head.split(b"\r\n", 1)[0].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadMessage(400, "start line is not UTF-8") from exc
    if not (_REQUEST_LINE.match(first) or _STATUS_LINE.match(first)):
        raise BadMessage(400, f"malformed start line {first[:80]!r}")
    try:
        message = Message.parse(head + b"\r\n\r\n")
    except (ValueError, KeyError, IndexError) as exc:
        raise BadMessage(400, f"unparseable header section ({exc})") from exc
    request = message if isinstance(message, Request) else None
    missing = [h for h in (*MANDATORY, *(("Max-Forwards",) if request else ())) if
               message.headers.get(h) is None]  # fmt: skip
    if "Via" in missing:
        raise BadMessage(400, "missing Via header")  # nowhere to answer
    if missing:
        raise BadMessage(400, f"missing mandatory header(s): {', '.join(missing)}", request)
    try:
        cseq = message.cseq
        length = message.content_length
        message.via  # noqa: B018 - parse every Via now, not in the middle of a transaction
    except ValueError as exc:
        raise BadMessage(400, f"unparseable header ({exc})", request) from exc
    if request is not None and cseq.method != request.method:
        raise BadMessage(400, f"CSeq method {cseq.method} is not {request.method}", request)
    if length is None:
        if stream:
            raise BadMessage(400, "missing Content-Length on a stream transport", request)
        length = len(body)
    if length > len(body):
        raise BadMessage(400, f"Content-Length {length} but {len(body)} body bytes", request)
    message.body = body[:length]
    return message


def request(
    method: str,
    uri: str,
    *,
    via: str,
    from_: str,
    to: str,
    call_id: str,
    cseq: int,
    contact: str = "",
    headers: list[tuple[str, str]] | None = None,
    body: bytes = b"",
    content_type: str = "",
) -> Request:
    req = Request(method, URI.parse(uri), body)
    req.headers.add("Via", via)
    req.headers.add("Max-Forwards", "70")
    req.headers.add("From", from_)
    req.headers.add("To", to)
    req.headers.add("Call-ID", call_id)
    req.headers.add("CSeq", f"{cseq} {method}")
    if contact:
        req.headers.add("Contact", contact)
    for name, value in headers or []:
        req.headers.add(name, value)
    if content_type:
        req.headers.add("Content-Type", content_type)
    return req


def response(
    req: Request,
    code: int,
    *,
    to_tag: str = "",
    headers: list[tuple[str, str]] | None = None,
    body: bytes = b"",
    content_type: str = "",
    phrase: str = "",
) -> Response:
    """A response to ``req`` (Via, From, To, Call-ID and CSeq copied; To tagged)."""
    resp = Response(code, phrase or PHRASES.get(code, "Unknown"), body)
    for value in req.headers.getlist("Via"):
        resp.headers.add("Via", value)
    for name in ("From", "To", "Call-ID", "CSeq"):
        found = req.headers.get(name)
        if found is None:
            continue
        if name == "To" and to_tag and ";tag=" not in found:
            found = f"{found};tag={to_tag}"
        resp.headers.add(name, found)
    for name, value in headers or []:
        resp.headers.add(name, value)
    if content_type:
        resp.headers.add("Content-Type", content_type)
    return resp


def to_bytes(message: SipMessage) -> bytes:
    """The wire form, with Content-Length set from the body."""
    message.headers.set("Content-Length", str(len(message.body)))
    return bytes(message)


def tag_of(value: str | None) -> str:
    """The ``tag`` parameter of a From/To value ("" when none)."""
    found = re.search(r";\s*tag=([^;>\s]+)", value or "")
    return found.group(1) if found else ""


def uri_of(value: str) -> str:
    """The URI inside a name-addr (``"Bob" <sip:bob@h>;tag=x`` -> ``sip:bob@h``)."""
    found = re.search(r"<([^>]*)>", value)
    return found.group(1) if found else value.split(";")[0].strip()


def header_items(value: str | None) -> tuple[str, ...]:
    """The items of a comma-separated header value (``Recv-Info: a, b``), blanks dropped."""
    return tuple(p.strip() for p in (value or "").split(",") if p.strip())
