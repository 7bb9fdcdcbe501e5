"""SIPp scenarios (XML) for the SIP tests, composed here so each test states its far end.

Each function returns the text of one scenario; :func:`write` puts it in a file
for ``sipp -sf``. SIPp fills the bracketed keywords (``[last_Via:]``,
``[media_port]``, ...); the far ends answer with PCMU and telephone-event on
the address SIPp is started on (loopback).
"""

from __future__ import annotations

from pathlib import Path

_RESPONSE = """
  <send{retrans}>
    <![CDATA[
SIP/2.0 {status}
[last_Via:]
[last_From:]
[last_To:]{tag}
[last_Call-ID:]
{cseq}
{extra}Content-Length: {length}

{body}]]>
  </send>"""
_TAG = ";tag=[pid]SIPpTag01[call_number]"
_SDP = """v=0
o=sipp 1 {version} IN IP[local_ip_type] [local_ip]
s=-
c=IN IP[media_ip_type] [media_ip]
t=0 0
m=audio [media_port] RTP/AVP {pt} 101
a=rtpmap:{pt} {codec}/8000
a=rtpmap:101 telephone-event/8000
a=ptime:20
"""


def response(status: str, *, tag: bool = True, cseq: str = "[last_CSeq:]", extra: str = "",
             sdp: str = "", retrans: bool = False) -> str:  # fmt: skip
    return _RESPONSE.format(
        retrans=' retrans="500"' if retrans else "",
        status=status,
        tag=_TAG if tag else "",
        cseq=cseq,
        extra=extra + ("Content-Type: application/sdp\n" if sdp else ""),
        length="[len]" if sdp else "0",
        body=sdp,
    )


def sdp(pt: int = 0, codec: str = "PCMU", version: int = 1) -> str:
    return _SDP.format(pt=pt, codec=codec, version=version)


def scenario(name: str, body: str) -> str:
    used = (
        '\n  <Reference variables="junk,contact,caller" />' if 'assign_to="caller"' in body else ""
    )
    head = '<?xml version="1.0" encoding="ISO-8859-1" ?>'
    return f'{head}\n<scenario name="{name}">{body}{used}\n</scenario>\n'


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


_INVITE_IN = """
  <recv request="INVITE">
    <action>
      <ereg regexp="&lt;(sip:[^&gt;]*)&gt;" search_in="hdr" header="Contact:"
            assign_to="junk,contact" />
      <ereg regexp=".*" search_in="hdr" header="From:" assign_to="caller" />
    </action>
  </recv>"""
CONTACT = "Contact: <sip:[local_ip]:[local_port];transport=[transport]>\n"


def reject(status: str) -> str:
    """100 Trying, then ``status`` (e.g. "486 Busy Here"), then the caller's ACK."""
    return scenario("reject", _INVITE_IN + response("100 Trying", tag=False) + response(status)
                    + '\n  <recv request="ACK" />')  # fmt: skip


def no_answer() -> str:
    """Rings until the caller's CANCEL: 200 to it, 487 to the INVITE."""
    return scenario("no answer", _INVITE_IN + response("180 Ringing")
                    + '\n  <recv request="CANCEL" />' + response("200 OK")
                    + response("487 Request Terminated", cseq="CSeq: [last_cseq_number] INVITE")
                    + '\n  <recv request="ACK" />')  # fmt: skip


def _answered(pt: int = 0, codec: str = "PCMU") -> str:
    return (response("180 Ringing") + response("200 OK", extra=CONTACT, sdp=sdp(pt, codec),
            retrans=True) + '\n  <recv request="ACK" />')  # fmt: skip


def _request(method: str, cseq: int, sdp_text: str = "") -> str:
    ctype = "Content-Type: application/sdp\n" if sdp_text else ""
    return f"""
  <send retrans="500">
    <![CDATA[
{method} [$contact] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:[service]@[local_ip]:[local_port]>;tag=[pid]SIPpTag01[call_number]
To: [$caller]
Call-ID: [call_id]
CSeq: {cseq} {method}
{CONTACT}Max-Forwards: 70
{ctype}Content-Length: {"[len]" if sdp_text else "0"}

{sdp_text}]]>
  </send>"""


_BYE_IN = '\n  <recv request="BYE" />' + response("200 OK", tag=False)


def answer(mode: str = "wait", hold_ms: int = 2000, pt: int = 0, codec: str = "PCMU") -> str:
    """Answers with ``codec``; then "wait" for the caller's BYE, "bye" after ``hold_ms``, or
    "reinvite" (after ``hold_ms``, move the media to PCMA, then wait for the BYE)."""
    body = _INVITE_IN + _answered(pt, codec)
    if mode == "bye":
        body += f'\n  <pause milliseconds="{hold_ms}" />' + _request("BYE", 2)
        body += '\n  <recv response="200" />'
    elif mode == "reinvite":
        body += f'\n  <pause milliseconds="{hold_ms}" />' + _request("INVITE", 2, sdp(8, "PCMA", 2))
        body += '\n  <recv response="200" />'
        body += (
            """
  <send>
    <![CDATA[
ACK [$contact] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:[service]@[local_ip]:[local_port]>;tag=[pid]SIPpTag01[call_number]
To: [$caller]
Call-ID: [call_id]
CSeq: 2 ACK
Max-Forwards: 70
Content-Length: 0

]]>
  </send>"""
            + _BYE_IN
        )
    else:
        body += _BYE_IN
    return scenario(f"answer ({mode})", body)


def challenge(user: str, password: str) -> str:
    """401 with a digest challenge; the retried INVITE answered 200 with the right
    credentials (then waits for BYE), 403 with wrong ones."""
    challenge_header = (
        'WWW-Authenticate: Digest realm="vae.test", nonce="[pid]n[call_number]", qop="auth"\n'
    )
    body = _INVITE_IN + response("401 Unauthorized", extra=challenge_header)
    body += '\n  <recv request="ACK" />'
    body += f"""
  <recv request="INVITE">
    <action>
      <verifyauth assign_to="authvalid" username="{user}" password="{password}" />
    </action>
  </recv>
  <nop test="authvalid" next="good" />""" + response("403 Forbidden")
    body += '\n  <recv request="ACK" next="end" />\n  <label id="good" />'
    body += _answered() + _BYE_IN + '\n  <label id="end" />'
    return scenario("digest challenge", body)


def calling_agent(greet_ms: int, message_ms: int, message_file: str = "") -> str:
    """An outbound agent: calls ``[service]`` (the dialled user part: a scenario's name) at
    the remote address, waits ``greet_ms``, plays ``message_file`` (an 8 kHz mu-law WAV) for
    ``message_ms`` (none: it hangs up at once), then sends BYE."""
    speak = ""
    if message_file:
        speak = f"""
  <nop><action><exec rtp_stream="{message_file},1,0" /></action></nop>
  <pause milliseconds="{message_ms}" />"""
    return scenario(
        "calling agent",
        f"""
  <send retrans="500">
    <![CDATA[
INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:agent@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
To: <sip:[service]@[remote_ip]:[remote_port]>
Call-ID: [call_id]
CSeq: 1 INVITE
{CONTACT}Max-Forwards: 70
Content-Type: application/sdp
Content-Length: [len]

{sdp()}]]>
  </send>
  <recv response="100" optional="true" />
  <recv response="180" optional="true" />
  <recv response="200" rtd="true" rrs="true" />
  <send>
    <![CDATA[
ACK [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:agent@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
Call-ID: [call_id]
CSeq: 1 ACK
Max-Forwards: 70
Content-Length: 0

]]>
  </send>
  <pause milliseconds="{greet_ms}" />{speak}
  <send retrans="500">
    <![CDATA[
BYE [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:agent@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
Call-ID: [call_id]
CSeq: 2 BYE
Max-Forwards: 70
Content-Length: 0

]]>
  </send>
  <recv response="200" />""",
    )


def answer_playing(pcap: str) -> str:
    """Answers, then plays the RTP of ``pcap`` (its timing, its SSRCs) and waits for BYE."""
    body = _INVITE_IN + _answered()
    body += f'\n  <nop><action><exec play_pcap_audio="{pcap}" /></action></nop>' + _BYE_IN
    return scenario("answer playing a capture", body)


def pcap(path: Path, packets: list[tuple[float, bytes]], dst_port: int = 6000) -> Path:
    """A capture of UDP datagrams (time in s, RTP bytes) on Ethernet, as SIPp replays them."""
    import struct

    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for when, payload in packets:
        udp = struct.pack("!HHHH", 6000, dst_port, 8 + len(payload), 0) + payload
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                         bytes([127, 0, 0, 1]), bytes([127, 0, 0, 1])) + udp  # fmt: skip
        frame = bytes(12) + b"\x08\x00" + ip
        sec, usec = int(when), int((when - int(when)) * 1_000_000)
        out.append(struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame)
    path.write_bytes(b"".join(out))
    return path


def register(user: str) -> str:
    """REGISTER ``user`` at the remote registrar (digest from ``-au``/``-ap``), then exit."""
    req = """
  <send retrans="500">
    <![CDATA[
REGISTER sip:[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:{user}@[remote_ip]>;tag=[pid]r[call_number]
To: <sip:{user}@[remote_ip]>
Call-ID: [call_id]
CSeq: {cseq} REGISTER
Contact: <sip:{user}@[local_ip]:[local_port]>
Expires: 300
Max-Forwards: 70
{auth}Content-Length: 0

]]>
  </send>"""
    return scenario("register", req.format(user=user, cseq=1, auth="")
                    + '\n  <recv response="401" auth="true" />'
                    + req.format(user=user, cseq=2, auth="[authentication]\n")
                    + '\n  <recv response="200" />')  # fmt: skip
