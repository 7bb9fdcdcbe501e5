"""SDP offer/answer (RFC 3264, RFC 4566) for one narrowband audio stream; no I/O.

vae offers PCMU and PCMA with telephone-event (RFC 4733) in 20 ms packets
and answers an offer with the first of the offerer's codecs it knows. The
addresses in vae's own SDP are exactly the host its RTP socket is bound to
(never one looked up), so a call set up on loopback advertises loopback.

:func:`parse` raises :class:`SdpError` for a description without a usable
audio stream; :func:`answer` raises :class:`NoCommonCodec` when the offer has
neither G.711 law (the caller answers 488).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from vae.sip import g711

DTMF_PT = 101
PTIME_MS = 20


class SdpError(ValueError):
    """A session description vae cannot use."""


class NoCommonCodec(SdpError):
    """The far end offered or answered no codec vae speaks."""


@dataclass(frozen=True)
class MediaDescription:
    """The audio stream of a session description."""

    host: str
    port: int
    #: Payload types in the order given.
    formats: tuple[int, ...]
    #: Payload type -> (encoding name upper-case, clock rate).
    rtpmap: dict[int, tuple[str, int]] = field(default_factory=dict)
    direction: str = "sendrecv"
    ptime_ms: int = PTIME_MS

    def encoding(self, pt: int) -> tuple[str, int]:
        if pt in self.rtpmap:
            return self.rtpmap[pt]
        if pt in g711.NAMES:
            return g711.NAMES[pt], g711.RATE  # static types need no rtpmap
        return "", 0

    def telephone_event(self) -> int | None:
        for pt in self.formats:
            if self.encoding(pt) == ("TELEPHONE-EVENT", 8000):
                return pt
        return None


@dataclass(frozen=True)
class Negotiated:
    """What both ends agreed: the codec, the keypad events' payload type, the peer's RTP."""

    payload_type: int
    dtmf_payload_type: int | None
    remote_host: str
    remote_port: int
    ptime_ms: int = PTIME_MS

    @property
    def codec(self) -> str:
        return g711.NAMES[self.payload_type]


def _check_host(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError as exc:
        raise SdpError(f"connection address {host!r} is not an IP address") from exc


def describe(
    host: str,
    port: int,
    formats: tuple[int, ...],
    session_id: int,
    version: int = 1,
    dtmf_pt: int | None = DTMF_PT,
) -> bytes:
    """vae's description: ``formats`` (G.711 payload types) plus telephone-event."""
    family = "IP6" if ":" in host else "IP4"
    pts = [*formats, *([dtmf_pt] if dtmf_pt is not None else [])]
    lines = [
        "v=0",
        f"o=vae {session_id} {version} IN {family} {host}",
        "s=vae",
        f"c=IN {family} {host}",
        "t=0 0",
        f"m=audio {port} RTP/AVP {' '.join(str(p) for p in pts)}",
        *(f"a=rtpmap:{pt} {g711.NAMES[pt]}/8000" for pt in formats),
    ]
    if dtmf_pt is not None:
        lines += [f"a=rtpmap:{dtmf_pt} telephone-event/8000", f"a=fmtp:{dtmf_pt} 0-15"]
    lines += [f"a=ptime:{PTIME_MS}", "a=sendrecv"]
    return ("\r\n".join(lines) + "\r\n").encode()


def offer(host: str, port: int, session_id: int, version: int = 1) -> bytes:
    return describe(host, port, (g711.PCMU, g711.PCMA), session_id, version)


def parse(body: bytes) -> MediaDescription:
    """The first audio stream of ``body``; :class:`SdpError` when there is none usable."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SdpError("SDP is not UTF-8 text") from exc
    session_host = media_host = ""
    port, formats = -1, tuple[int, ...]()
    rtpmap: dict[int, tuple[str, int]] = {}
    direction, ptime, in_audio, seen_audio = "sendrecv", PTIME_MS, False, False
    for raw in text.splitlines():
        line = raw.strip()
        if len(line) < 2 or line[1] != "=":
            continue
        kind, value = line[0], line[2:]
        if kind == "m":
            in_audio = value.startswith("audio ") and not seen_audio
            if in_audio:
                seen_audio = True
                bits = value.split()
                if len(bits) < 4 or not bits[1].split("/")[0].isdigit():
                    raise SdpError(f"malformed media line {line!r}")
                port = int(bits[1].split("/")[0])
                if not all(b.isdigit() for b in bits[3:]):
                    raise SdpError(f"media line {line!r} lists non-numeric formats")
                formats = tuple(int(b) for b in bits[3:])
        elif kind == "c":
            bits = value.split()
            if len(bits) < 3:
                raise SdpError(f"malformed connection line {line!r}")
            host = _check_host(bits[2].split("/")[0])
            if seen_audio and in_audio:
                media_host = host
            elif not seen_audio:
                session_host = host
        elif kind == "a" and (in_audio or not seen_audio):
            name, _, rest = value.partition(":")
            if name == "rtpmap" and in_audio:
                pt, _, enc = rest.partition(" ")
                bits = enc.split("/")
                if pt.isdigit() and len(bits) >= 2 and bits[1].isdigit():
                    rtpmap[int(pt)] = (bits[0].upper(), int(bits[1]))
            elif name in ("sendrecv", "sendonly", "recvonly", "inactive"):
                direction = name
            elif name == "ptime" and rest.strip().isdigit():
                ptime = int(rest.strip())
    if not seen_audio:
        raise SdpError("no audio stream (m=audio) in the SDP")
    host = media_host or session_host
    if not host:
        raise SdpError("no connection address (c=) for the audio stream")
    if not 0 <= port <= 65535:
        raise SdpError(f"audio port {port} out of range")
    return MediaDescription(host, port, formats, rtpmap, direction, ptime)


def choose(media: MediaDescription) -> Negotiated:
    """The first G.711 codec of ``media`` (its order is the offerer's preference)."""
    for pt in media.formats:
        # Static types only (RFC 3551): a G.711 law under a dynamic number is not offered.
        if pt in g711.NAMES and media.encoding(pt) == (g711.NAMES[pt], g711.RATE):
            return Negotiated(pt, media.telephone_event(), media.host, media.port,
                              media.ptime_ms)  # fmt: skip
    offered = ", ".join(f"{pt} {media.encoding(pt)[0] or '?'}" for pt in media.formats)
    raise NoCommonCodec(f"no PCMU or PCMA among the offered formats ({offered or 'none'})")


def answer(
    offered: MediaDescription, host: str, port: int, session_id: int, version: int = 1
) -> tuple[bytes, Negotiated]:
    """vae's answer to ``offered`` and what was agreed; :class:`NoCommonCodec` when nothing."""
    agreed = choose(offered)
    dtmf = agreed.dtmf_payload_type
    body = describe(host, port, (agreed.payload_type,), session_id, version, dtmf)
    return body, agreed
