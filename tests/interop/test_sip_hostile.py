"""Hostile SIP and RTP: each ends in a clear stop reason, nothing crashes, others go on.

- At the bridge's listener: a malformed start line, an INVITE without Call-ID,
  one with a Content-Length longer than its body, one with a 64 KB header (over
  TCP: no datagram is that large), one whose SDP has no common codec. The
  ones that can be answered get 400/513/488; the session that waited for a
  call ends ``peer_never_joined`` naming every refusal; a proper call that
  comes after them (SIPp) is taken and played to its end.
- In a call's RTP (SIPp replaying a capture the test wrote, from its own media
  port): a stream whose SSRC changes mid-call and packets from a stranger's
  address are recorded as warnings and the call goes on; a flood ends its
  session ``bot_error`` while the other session of the run is unaffected.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from tests.conftest import require_tool
from tests.interop import sipp_scenarios as sc
from tests.interop.conftest import SETTINGS
from tests.interop.sip_helpers import caller_scenario, free_udp_port, run_through, sipp
from tests.interop.test_sip_inbound import message_wav
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.recordings.models import EventKind
from vae.recordings.read.reader import RecordingReader
from vae.sip.rtp import RtpPacket


@pytest.fixture(autouse=True)
def _sipp() -> None:
    require_tool("sipp", "bash scripts/ci_setup_sip.sh")


@pytest.fixture
async def listening(db_path: Path) -> AsyncIterator[BridgeServer]:
    server = BridgeServer(db_path, SETTINGS, sip_listen=f"127.0.0.1:{free_udp_port()}")
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


PCMU_SDP = b"v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 9 RTP/AVP 0\r\n"


def invite(port: int, *, drop: str = "", length: int | None = None, extra: str = "",
           sdp: bytes = PCMU_SDP) -> bytes:  # fmt: skip
    head = [
        "INVITE sip:victim@127.0.0.1 SIP/2.0",
        f"Via: SIP/2.0/UDP 127.0.0.1:{port};branch=z9hG4bK{port}{drop or 'x'}{len(extra)}",
        "Max-Forwards: 70",
        "From: <sip:evil@127.0.0.1>;tag=e1",
        "To: <sip:victim@127.0.0.1>",
        f"Call-ID: hostile-{drop}-{len(extra)}-{length}",
        "CSeq: 1 INVITE",
        "Content-Type: application/sdp",
        f"Content-Length: {len(sdp) if length is None else length}",
    ]
    head = [h for h in head if not (drop and h.startswith(drop))]
    if extra:
        head.insert(4, extra)
    return ("\r\n".join(head) + "\r\n\r\n").encode() + sdp


def answers(sock: socket.socket) -> list[str]:
    """Status lines that came back to ``sock`` (it times out when there are no more)."""
    out = []
    try:
        while True:
            out.append(sock.recv(65535).split(b"\r\n", 1)[0].decode())
    except TimeoutError:
        return out


async def test_hostile_requests_are_refused_and_a_proper_call_still_gets_through(
    tmp_path: Path, listening: BridgeServer, db_path: Path
) -> None:
    assert listening.sip is not None
    host, port = "127.0.0.1", listening.sip.agent.port
    inbound = bridge_pb2.ConnectorConfig(kind="sip-inbound", url="sip-inbound:",
                                         options_json=json.dumps({"wait_s": 6}))  # fmt: skip
    docs = [caller_scenario("victim", 20), caller_scenario("survivor", 20)]
    g722 = b"v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 9 RTP/AVP 9\r\na=rtpmap:9 G722/8000\r\n"
    wav = str(message_wav(tmp_path / "m.wav", 2.0))
    async with grpc.aio.insecure_channel(listening.address) as channel:
        stub = bridge_pb2_grpc.BridgeServiceStub(channel)
        run = asyncio.ensure_future(run_through(listening, stub, docs, inbound, users=2))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.bind((host, 0))
            udp.settimeout(0.5)
            me = udp.getsockname()[1]
            for data in (b"HELLO WORLD\r\n\r\n", invite(me, drop="Call-ID"),
                         invite(me, length=900), invite(me, sdp=g722)):  # fmt: skip
                udp.sendto(data, (host, port))
            statuses = await asyncio.to_thread(answers, udp)
        big = invite(me, extra="X-Big: " + "x" * 65536)
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(big)
        await writer.drain()
        assert await asyncio.wait_for(reader.read(), 5) == b""  # refused: the connection closed
        writer.close()
        async with sipp(tmp_path, sc.calling_agent(1500, 1500, wav), "-s", "survivor",
                        client_to=f"{host}:{port}") as far:  # fmt: skip
            run_id, _ = await run
            assert await far.finished() == 0, far.messages()
    # (the 488 comes again until it is ACKed, as RFC 3261 §17.2.1 wants)
    assert sorted({s.split()[1] for s in statuses}) == ["100", "400", "488"], statuses
    assert sum(" 400 " in s for s in statuses) == 2
    with RecordingReader(db_path) as r:
        sessions = {s.scenario_name: s for s in r.sessions(run_id)}
    victim, survivor = sessions["victim"], sessions["survivor"]
    assert victim.stop_reason == "peer_never_joined"
    for refusal in ("malformed start line", "Call-ID", "Content-Length 900", "bytes on a stream",
                    "488: no PCMU or PCMA"):  # fmt: skip
        assert refusal in victim.stop_detail, victim.stop_detail
    assert (survivor.stop_reason, survivor.clean_exit) == ("end_tool", True), survivor.stop_detail


def stream(ssrc: int, start_s: float, seconds: float, every_s: float = 0.02,
           seq: int = 0, ts: int = 0) -> list[tuple[float, bytes]]:  # fmt: skip
    n = int(seconds / every_s)
    return [(start_s + i * every_s,
             RtpPacket(0, seq + i, ts + 160 * i, ssrc, b"\x80" * 160).to_bytes())
            for i in range(n)]  # fmt: skip


async def rtp_port(far_messages: callable, within_s: float = 10.0) -> int:  # type: ignore[valid-type]
    """vae's RTP port, read from its INVITE's SDP in SIPp's trace."""
    for _ in range(int(within_s / 0.05)):
        found = re.search(r"m=audio (\d+) RTP/AVP 0 8 101", far_messages())
        if found:
            return int(found.group(1))
        await asyncio.sleep(0.05)  # polling the trace, bounded
    raise AssertionError("no INVITE with SDP in SIPp's trace")


async def test_rtp_oddities_are_recorded_and_the_call_goes_on(
    tmp_path: Path, bridge: BridgeServer, bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
) -> None:  # fmt: skip
    capture = sc.pcap(
        tmp_path / "ssrc.pcap",
        stream(0x1111, 0.0, 1.5) + stream(0x2222, 1.5, 1.5, seq=900, ts=9000),
    )
    async with sipp(tmp_path, sc.answer_playing(str(capture))) as far:
        run = asyncio.ensure_future(
            run_through(
                bridge,
                bridge_stub,
                [caller_scenario("odd", 5)],
                bridge_pb2.ConnectorConfig(kind="sip", url=far.uri),
            )
        )
        port = await rtp_port(far.messages)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stranger:
            stranger.bind(("127.0.0.1", 0))
            for packet in stream(0x3333, 0, 0.2):
                stranger.sendto(packet[1], ("127.0.0.1", port))
        run_id, _ = await run
        assert await far.finished() == 0, far.messages()
    with RecordingReader(db_path) as r:
        (s,) = r.sessions(run_id)
        logs = [e.payload for e in r.events(s.session_id) if e.kind is EventKind.LOG]
    kinds = {p.get("sip_event") for p in logs}
    assert s.stop_reason == "max_duration", s.stop_detail
    assert {"rtp_ssrc_change", "rtp_foreign_source"} <= kinds, logs


@pytest.mark.serial  # the flood is load of its own: run alone, after the rest
async def test_an_rtp_flood_ends_its_session_and_spares_the_other(
    tmp_path: Path, bridge: BridgeServer, bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
) -> None:  # fmt: skip
    flood = sc.pcap(tmp_path / "flood.pcap", stream(0x4444, 0.0, 4.0, every_s=0.0005))
    async with sipp(tmp_path, sc.answer_playing(str(flood)), name="flooder") as bad, \
            sipp(tmp_path, sc.answer(), "-rtp_echo", name="calm") as good:  # fmt: skip
        agent = bridge_pb2.ConnectorConfig(kind="sip", url=bad.uri, pool_urls=[good.uri])
        docs = [caller_scenario("one", 6), caller_scenario("two", 6)]
        run_id, _ = await run_through(bridge, bridge_stub, docs, agent, users=2, concurrency=2)
    with RecordingReader(db_path) as r:
        by_endpoint = {s.agent_bot["labels"]["endpoint"]: s for s in r.sessions(run_id)}
    flooded, spared = by_endpoint[bad.uri], by_endpoint[good.uri]
    assert flooded.stop_reason == "bot_error" and "RTP flood" in flooded.stop_detail
    assert spared.stop_reason == "max_duration", spared.stop_detail
