"""One call's RTP stream: G.711 out in 20 ms packets, in through the jitter buffer, keys both ways.

Sending is driven by whoever has audio: :meth:`RtpStream.send_pcm` takes
8 kHz PCM16 and sends a packet for every 160 samples (the bridge pushes its
open-mic frames, a bot its paced voice), so packets leave on the sender's
own real-time clock. Keys (:meth:`RtpStream.send_digits`) replace the audio
packets they coincide with by RFC 4733 events, so they are paced the same way.

Receiving is a datagram callback that trusts nothing:

- packets from any address but the negotiated one are dropped (counted,
  reported once per source): vae does not follow a stream that moves;
- more than ``max_packets_per_s`` in a second is a flood: the excess is
  dropped, and a flood that lasts ``flood_s`` is reported as fatal, so the
  owner ends the call (a 20 ms stream sends 50 a second);
- a packet that is not RTP is dropped and reported (rate-limited);
- a new SSRC restarts the jitter buffer's timeline and is reported;
- a telephone-event reports its key once (at its first packet);
- payload types other than the codec and telephone-event are ignored.

Reports go to ``on_notice`` as :class:`MediaNotice`; the owner records them.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from vae.sip import g711
from vae.sip.jitter import JitterBuffer
from vae.sip.rtp import RtpError, RtpPacket, TelephoneEvent, event_packets, parse, parse_event
from vae.sip.sdp import Negotiated

log = logging.getLogger("vae.sip.media")
PACKET_SAMPLES = 160


@dataclass(frozen=True, slots=True)
class MediaNotice:
    """Something the stream saw: ``kind`` is digit, foreign_source, ssrc_change,
    malformed, flood or fatal_flood; ``detail`` says what, for the record."""

    kind: str
    detail: str
    key: str = ""


class RtpStream(asyncio.DatagramProtocol):
    def __init__(
        self,
        host: str,
        on_notice: Callable[[MediaNotice], None],
        *,
        jitter_ms: int = 60,
        max_packets_per_s: int = 250,
        flood_s: float = 2.0,
    ) -> None:
        self.host = host
        self.port = 0
        self.on_notice = on_notice
        self.jitter = JitterBuffer(8 * jitter_ms, 8 * max(jitter_ms * 4, 400))
        self.negotiated: Negotiated | None = None
        self.max_packets_per_s, self.flood_s = max_packets_per_s, flood_s
        self._transport: asyncio.DatagramTransport | None = None
        self._remote: tuple[str, int] | None = None
        self._ssrc = secrets.randbits(32)
        self._seq = secrets.randbits(16)
        self._ts = secrets.randbits(32)
        self._pending = bytearray()
        self._events: list[TelephoneEvent | None] = []
        self._event_ts = 0
        self._in_event = False
        self._peer_ssrc: int | None = None
        self._last_event: tuple[int, str] | None = None
        self._foreign: set[tuple[str, int]] = set()
        self._window_start = 0.0
        self._window_count = 0
        self._flooding_since: float | None = None
        self._malformed_reported = 0.0
        self.last_received = 0.0
        self.counts = {"sent": 0, "received": 0, "dropped": 0}

    async def open(self) -> RtpStream:
        loop = asyncio.get_running_loop()
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        await loop.create_datagram_endpoint(lambda: self, local_addr=(self.host, 0), family=family)
        self.last_received = loop.time()
        return self

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]  # a datagram transport
        self.port = transport.get_extra_info("sockname")[1]

    def connect(self, negotiated: Negotiated) -> None:
        """Send to and accept from the negotiated peer (again after a re-INVITE)."""
        self.negotiated = negotiated
        self._remote = (negotiated.remote_host, negotiated.remote_port)

    # ------------------------------------------------------------------ sending
    def send_pcm(self, pcm: bytes) -> None:
        """8 kHz PCM16: a packet per 160 samples (a key being sent takes its place)."""
        self._pending += pcm
        size = PACKET_SAMPLES * 2
        while len(self._pending) >= size:
            chunk = bytes(self._pending[:size])
            del self._pending[:size]
            self._send_packet(chunk)

    def send_digits(self, digits: str, tone_ms: int, gap_ms: int) -> None:
        """Queue keys as RFC 4733 events: ``tone_ms`` of event, then ``gap_ms`` of audio."""
        if self.negotiated is None or self.negotiated.dtmf_payload_type is None:
            return
        for key in digits:
            self._events += event_packets(key, max(8 * tone_ms, PACKET_SAMPLES), PACKET_SAMPLES)
            self._events += [None] * max(gap_ms * 8 // PACKET_SAMPLES, 1)  # audio in between

    def _send_packet(self, pcm: bytes) -> None:
        """One 20 ms slot: the next queued key event, else the audio (timestamps follow slots)."""
        if self._transport is None or self._remote is None or self.negotiated is None:
            return
        n = self.negotiated
        item = self._events.pop(0) if self._events else None
        if item is not None and n.dtmf_payload_type is not None:
            marker = not self._in_event
            if marker:
                self._event_ts, self._in_event = self._ts, True
            self._write(RtpPacket(n.dtmf_payload_type, self._seq, self._event_ts, self._ssrc,
                                  item.to_bytes(), marker))  # fmt: skip
            if item.end and not (self._events and self._events[0] is not None
                                 and self._events[0].end):  # fmt: skip
                self._in_event = False
        else:
            self._write(RtpPacket(n.payload_type, self._seq, self._ts, self._ssrc,
                                  g711.encode(pcm, n.payload_type)))  # fmt: skip
        self._ts = (self._ts + PACKET_SAMPLES) & 0xFFFFFFFF

    def _write(self, packet: RtpPacket) -> None:
        assert self._transport is not None and self._remote is not None
        self._transport.sendto(packet.to_bytes(), self._remote)
        self._seq = (self._seq + 1) & 0xFFFF
        self.counts["sent"] += 1

    # ---------------------------------------------------------------- receiving
    def datagram_received(self, data: bytes, addr: Any) -> None:
        loop_time = asyncio.get_running_loop().time()
        if not self._admit(loop_time):
            return
        source = (addr[0], addr[1])
        if source != self._remote:
            self.counts["dropped"] += 1
            if source not in self._foreign and len(self._foreign) < 16:
                self._foreign.add(source)
                expected = f"{self._remote[0]}:{self._remote[1]}" if self._remote else "none yet"
                self.on_notice(MediaNotice("foreign_source", f"RTP from {source[0]}:{source[1]} "
                                           f"dropped (the call's peer is {expected})"))  # fmt: skip
            return
        try:
            packet = parse(data)
        except RtpError as exc:
            self.counts["dropped"] += 1
            if loop_time - self._malformed_reported > 1.0:
                self._malformed_reported = loop_time
                self.on_notice(MediaNotice("malformed", f"unusable RTP packet dropped: {exc}"))
            return
        self.last_received = loop_time
        self.counts["received"] += 1
        n = self.negotiated
        if n is None:
            return
        if packet.payload_type == n.dtmf_payload_type and n.dtmf_payload_type is not None:
            self._event(packet)
        elif packet.payload_type == n.payload_type:
            if packet.ssrc != self._peer_ssrc:
                if self._peer_ssrc is not None:
                    self.jitter.reset()
                    self.on_notice(MediaNotice("ssrc_change", f"the peer's RTP SSRC changed from "
                                               f"{self._peer_ssrc:#010x} to {packet.ssrc:#010x}: "
                                               "its stream restarted"))  # fmt: skip
                self._peer_ssrc = packet.ssrc
            pcm = np.frombuffer(g711.decode(packet.payload, n.payload_type), dtype="<i2")
            self.jitter.push(packet.timestamp, pcm)

    def _admit(self, now: float) -> bool:
        """Count the packet in this second's window; False for the excess of a flood."""
        if now - self._window_start >= 1.0:
            if self._window_count <= self.max_packets_per_s:
                self._flooding_since = None
            self._window_start, self._window_count = now, 0
        self._window_count += 1
        if self._window_count <= self.max_packets_per_s:
            return True
        self.counts["dropped"] += 1
        if self._flooding_since is None:
            self._flooding_since = now
            self.on_notice(MediaNotice("flood", f"more than {self.max_packets_per_s} RTP packets "
                                       "in a second: the excess is dropped"))  # fmt: skip
        elif now - self._flooding_since >= self.flood_s:
            self._flooding_since = now + 3600  # report the fatal flood once
            self.on_notice(MediaNotice("fatal_flood", f"RTP flood: over {self.max_packets_per_s}"
                                       f" packets a second for {self.flood_s:g} s"))  # fmt: skip
        return False

    def _event(self, packet: RtpPacket) -> None:
        try:
            event = parse_event(packet.payload)
        except RtpError as exc:
            self.on_notice(MediaNotice("malformed", f"telephone-event dropped: {exc}"))
            return
        ident = (packet.timestamp, event.key)
        if ident != self._last_event:  # an event's packets all carry its start timestamp
            self._last_event = ident
            self.on_notice(MediaNotice("digit", f"key {event.key} (RFC 4733)", event.key))

    def pop(self, samples: int = PACKET_SAMPLES) -> bytes:
        """The next ``samples`` of received audio, 8 kHz PCM16 (silence where none came)."""
        return bytes(self.jitter.pop(samples).astype("<i2").tobytes())

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
