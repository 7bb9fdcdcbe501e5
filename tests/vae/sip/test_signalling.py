"""SDP, digest and message limits: what vae.sip refuses and what it writes."""

from __future__ import annotations

import hashlib

import pytest

from vae.sip import digest, messages, sdp
from vae.sip.messages import BadMessage

INVITE = (
    b"INVITE sip:agent@127.0.0.1 SIP/2.0\r\n"
    b"Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK1\r\nMax-Forwards: 70\r\n"
    b"From: <sip:a@127.0.0.1>;tag=1\r\nTo: <sip:agent@127.0.0.1>\r\nCall-ID: c1\r\n"
    b"CSeq: 1 INVITE\r\nX-Folded: a\r\n b\r\nContent-Length: 3\r\n\r\nabc"
)


def test_a_good_message_parses() -> None:
    req = messages.parse(INVITE)
    assert req.body == b"abc" and req.headers.get("X-Folded") == "a b"


@pytest.mark.parametrize(
    ("data", "status", "answerable", "problem"),
    [
        (b"HELLO WORLD\r\n\r\n", 400, False, "start line"),
        (INVITE.replace(b"Call-ID: c1\r\n", b""), 400, True, "Call-ID"),
        (INVITE.replace(b"Max-Forwards: 70\r\n", b""), 400, True, "Max-Forwards"),
        (INVITE.replace(b"Content-Length: 3", b"Content-Length: 300"), 400, True, "Content-Length"),
        (INVITE.replace(b"CSeq: 1 INVITE", b"CSeq: 1 BYE"), 400, True, "CSeq method"),
        (INVITE.replace(b"X-Folded: a", b"X-Big: " + b"x" * 65536), 513, False, "bytes"),
        (INVITE.split(b"Via")[0] + b"To: <sip:x@y>\r\n\r\n", 400, False, "Via"),
    ],
)
def test_hostile_messages_are_refused(
    data: bytes, status: int, answerable: bool, problem: str
) -> None:
    with pytest.raises(BadMessage, match=problem) as caught:
        messages.parse(data)
    assert caught.value.status == status
    assert (caught.value.request is not None) is answerable


def test_a_stream_message_needs_its_length() -> None:
    with pytest.raises(BadMessage, match="Content-Length"):
        messages.parse(INVITE.replace(b"Content-Length: 3\r\n", b""), stream=True)


def test_offer_answer() -> None:
    offer = sdp.parse(sdp.offer("127.0.0.1", 4000, 1))
    assert offer.formats == (0, 8, 101) and offer.telephone_event() == 101
    body, agreed = sdp.answer(offer, "127.0.0.1", 5000, 2)
    assert agreed.payload_type == 0 and agreed.remote_port == 4000
    assert b"c=IN IP4 127.0.0.1" in body and b"m=audio 5000 RTP/AVP 0 101" in body
    alaw_first = sdp.parse(b"v=0\r\nc=IN IP4 127.0.0.2\r\nm=audio 9 RTP/AVP 8 0\r\n")
    assert sdp.choose(alaw_first).payload_type == 8


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 9 RTP/AVP 9 18\r\n", "no PCMU or PCMA"),
        (b"v=0\r\nc=IN IP4 127.0.0.1\r\nm=video 9 RTP/AVP 96\r\n", "no audio"),
        (b"v=0\r\nm=audio 9 RTP/AVP 0\r\n", "no connection address"),
        (b"v=0\r\nc=IN IP4 host.example\r\nm=audio 9 RTP/AVP 0\r\n", "not an IP address"),
    ],
)
def test_unusable_sdp(body: bytes, problem: str) -> None:
    with pytest.raises(sdp.SdpError, match=problem):
        sdp.choose(sdp.parse(body))


def test_digest_matches_rfc_2617_arithmetic() -> None:
    creds = digest.Credentials("alice", "s3cret")
    value = digest.answer('Digest realm="r", nonce="n"', "INVITE", "sip:b@h", creds)
    ha1 = hashlib.md5(b"alice:r:s3cret").hexdigest()
    ha2 = hashlib.md5(b"INVITE:sip:b@h").hexdigest()
    assert f'response="{hashlib.md5(f"{ha1}:n:{ha2}".encode()).hexdigest()}"' in value
    assert "s3cret" not in value and "s3cret" not in repr(creds)
    with_qop = digest.answer('Digest realm="r", nonce="n", qop="auth"', "INVITE", "sip:b@h", creds)
    assert "qop=auth" in with_qop and "nc=00000001" in with_qop
    sha = digest.answer('Digest realm="r", nonce="n", algorithm=SHA-256', "BYE", "sip:b@h", creds)
    assert "algorithm=SHA-256" in sha
    with pytest.raises(digest.DigestError, match="Basic"):
        digest.answer('Basic realm="r"', "INVITE", "sip:b@h", creds)
