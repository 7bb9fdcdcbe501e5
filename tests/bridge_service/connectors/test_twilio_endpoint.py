"""The Twilio endpoint against a Media Streams bot on a real loopback WebSocket.

The bot here is a few lines of ``websockets`` speaking the protocol, so the
connector's own rules are checked exactly: marks are echoed only once the
audio before them has played, a burst beyond the queue bound is dropped and
recorded, the bot closing the socket is its hang-up after its audio played.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from tests.bridge_service.conftest import scenario, start_run, watch
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.connectors.base import (
    BotAudio,
    BotEvent,
    ConnectorConfig,
    FinalStatePart,
    PeerAudio,
    SessionEndingOut,
    SessionStartInfo,
)
from vae.bridge_service.connectors.twilio.connector import dial
from vae.bridge_service.connectors.twilio.options import stream_sid
from vae.bridge_service.server import BridgeServer
from vae.recordings.models import EventKind, Side
from vae.recordings.read.bot_errors import bot_errors
from vae.recordings.read.reader import RecordingReader


def media(seconds: float) -> str:
    payload = base64.b64encode(b"\x00" * int(8000 * seconds)).decode()  # μ-law 0x00: loud
    return json.dumps({"event": "media", "streamSid": "MZ", "media": {"payload": payload}})


async def test_marks_after_playout_bounded_queue_and_hang_up() -> None:
    seen: list[dict[str, Any]] = []
    echoed = asyncio.Event()

    async def bot(ws: ServerConnection) -> None:
        async for raw in ws:
            msg = json.loads(raw)
            seen.append(msg)
            if msg["event"] == "start":
                await ws.send(media(0.3))
                await ws.send(media(0.3))  # beyond max_queue_s: dropped
                await ws.send(json.dumps({"event": "mark", "mark": {"name": "m1"}}))
            if msg["event"] == "mark":
                echoed.set()
                await ws.close()  # hang up

    async with serve(bot, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        config = ConnectorConfig("twilio", f"twilio+ws://127.0.0.1:{port}", {"max_queue_s": 0.5})
        endpoint = await dial(config, Side.AGENT)
        start = SessionStartInfo(
            "run", "sess", "sc", 1, Side.AGENT, "d", "p", {}, {}, [], {}, 10_000, False, 8000
        )
        got: list[object] = []

        async def read() -> None:
            async for item in endpoint.receive():
                got.append(item)
                if isinstance(item, BotEvent) and item.kind is EventKind.END_CONVERSATION:
                    await endpoint.send(SessionEndingOut("end_tool", "", 1000))
                if isinstance(item, FinalStatePart):
                    return

        async with asyncio.timeout(10), asyncio.TaskGroup() as tg:
            reader = tg.create_task(read())
            await endpoint.send(start)
            await endpoint.send(PeerAudio(0, 0, b"\x00\x10" * 160, 0))
            await echoed.wait()
            await reader
        await endpoint.close()

    kinds = [m["event"] for m in seen]
    assert kinds[:3] == ["connected", "start", "media"] and kinds[-1] == "mark"
    assert seen[1]["start"]["customParameters"]["session_id"] == "sess"
    assert seen[1]["start"]["callSid"].startswith("CA")
    audio = [i for i in got if isinstance(i, BotAudio)]
    events = [i for i in got if isinstance(i, BotEvent)]
    voiced = [i for i, a in enumerate(audio) if any(a.pcm)]
    assert len(voiced) == 15  # 0.3 s in 20 ms frames: the second burst was dropped
    (dropped,) = [e for e in events if e.kind is EventKind.AUDIO_DROPPED]
    assert dropped.payload["samples"] == 2400
    mark_at = got.index(next(e for e in events if e.payload.get("twilio_event") == "mark"))
    assert mark_at > got.index(audio[voiced[-1]])  # echoed only after its audio played
    end = next(e for e in events if e.kind is EventKind.END_CONVERSATION)
    assert end.payload["kind"] == "agent_end_tool"
    assert isinstance(got[-1], FinalStatePart) and got[-1].state is None


def start_info() -> SessionStartInfo:
    return SessionStartInfo(
        "run", "sess", "sc", 1, Side.AGENT, "d", "p", {}, {}, [], {}, 10_000, False, 8000
    )


async def test_a_bot_gone_before_start_is_seen_as_an_error_close_not_a_silent_bot() -> None:
    """The bot accepts, then closes with 1011 before `start` goes out: send fails,
    and receive still sees the close (it used to wait for a start that never came)."""

    async def bot(ws: ServerConnection) -> None:
        await ws.close(1011, "boom")

    async with serve(bot, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        endpoint = await dial(
            ConnectorConfig("twilio", f"twilio+ws://127.0.0.1:{port}"), Side.AGENT
        )
        await endpoint._ws.wait_closed()
        with pytest.raises(ConnectionClosed):
            await endpoint.send(start_info())
        async with asyncio.timeout(5):
            got = [item async for item in endpoint.receive()]
        await endpoint.close()
    (event,) = [i for i in got if not isinstance(i, BotAudio)]  # no hang-up, no final state
    assert isinstance(event, BotEvent) and event.kind is EventKind.LOG
    assert event.payload["level"] == "error" and event.payload["close_code"] == 1011


@pytest.mark.parametrize(
    ("code", "stop_reason", "status"),
    [
        (1011, "bot_disconnected", bridge_pb2.RUN_STATUS_FAILED),
        (1013, "bot_disconnected", bridge_pb2.RUN_STATUS_FAILED),
        (1000, "end_tool", bridge_pb2.RUN_STATUS_COMPLETED),
    ],
)
async def test_only_a_clean_close_is_the_agent_hanging_up(
    bridge: BridgeServer,
    stub: bridge_pb2_grpc.BridgeServiceStub,
    code: int,
    stop_reason: str,
    status: int,
) -> None:
    async def bot(ws: ServerConnection) -> None:
        async for raw in ws:
            if json.loads(raw)["event"] == "start":
                await ws.send(media(0.5))
                await ws.send(json.dumps({"event": "mark", "mark": {"name": "said"}}))
            elif json.loads(raw)["event"] == "mark":
                await ws.close(code, "bye" if code == 1000 else "internal error")

    async with serve(bot, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        agent = bridge_pb2.ConnectorConfig(kind="twilio", url=f"twilio+ws://127.0.0.1:{port}")
        user = bridge_pb2.ConnectorConfig(
            kind="fake", url="fake://u", options_json=json.dumps({"speak_s": 0.0})
        )
        run_id = await start_run(
            stub,
            [scenario(first_speaker="agent")],
            max_auto_retries=0,
            user_connector=user,
            agent_connector=agent,
        )
        events = await watch(stub, run_id)
    assert events[-1].status == status, [e.message for e in events]
    with RecordingReader(bridge.db_path) as r:
        (s,) = r.sessions(run_id)
        errors = bot_errors(r, s.session_id)
    assert s.stop_reason == stop_reason, s.stop_detail
    if code == 1000:
        assert "closed the media stream" in s.stop_detail and not errors
    else:
        assert any(
            "agent: the agent bot's media stream closed with an error" in e and str(code) in e
            for e in errors
        ), errors


class _StateHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path.startswith("/missing"):
            self.send_error(404)
            return
        body = b"<html>not json</html>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def state_server() -> Iterator[str]:
    """An HTTP server on loopback: ``/missing/…`` is a 404, anything else is not JSON."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StateHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A port that accepts connections and never answers (a hung state endpoint)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.parametrize(
    ("where", "path", "problem"),
    [
        ("state_server", "/missing/{call_sid}", "failed: HTTP Error 404"),
        ("state_server", "/calls/{call_sid}", "returned no JSON"),
        ("silent_server", "/calls/{call_sid}", "failed: timed out"),
    ],
)
async def test_a_failed_final_state_fetch_is_recorded_as_a_bot_error(
    bridge: BridgeServer,
    stub: bridge_pb2_grpc.BridgeServiceStub,
    request: pytest.FixtureRequest,
    where: str,
    path: str,
    problem: str,
) -> None:
    base = request.getfixturevalue(where)

    async def bot(ws: ServerConnection) -> None:
        async for raw in ws:
            if json.loads(raw)["event"] == "start":
                await ws.send(media(0.3))
                await ws.close()  # hang up once the greeting has gone out

    async with serve(bot, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        options = {"final_state_url": base + path, "final_state_timeout_s": 0.5}
        agent = bridge_pb2.ConnectorConfig(
            kind="twilio", url=f"twilio+ws://127.0.0.1:{port}", options_json=json.dumps(options)
        )
        user = bridge_pb2.ConnectorConfig(
            kind="fake", url="fake://u", options_json=json.dumps({"speak_s": 0.0})
        )
        run_id = await start_run(
            stub,
            [scenario(first_speaker="agent")],
            max_auto_retries=0,
            user_connector=user,
            agent_connector=agent,
        )
        await watch(stub, run_id)
    with RecordingReader(bridge.db_path) as r:
        (s,) = r.sessions(run_id)
        errors = bot_errors(r, s.session_id)
        final = r.final_states(s.session_id).get(Side.AGENT)
    assert s.stop_reason == "end_tool", s.stop_detail
    assert final is None or final.state is None
    url = base + path.replace("{call_sid}", stream_sid("CA", s.session_id))
    (line,) = errors
    assert line.startswith(f"agent: twilio final state: GET {url} {problem}"), line


async def test_the_callers_keys_reach_a_twilio_agent_as_one_dtmf_message_per_key(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    """The scripted caller's ``dtmf: "42#"`` over the Twilio connector: three messages."""
    from vae import dtmf
    from vae.bots.brains.scripted import play_script
    from vae.bots.runner import BotConfig, run_bots
    from vae.bots.sound.speech import BuzzSynthesiser
    from vae.recordings.models import Channel

    seen: list[dict[str, Any]] = []

    async def bot(ws: ServerConnection) -> None:
        async for raw in ws:
            msg = json.loads(raw)
            seen.append(msg)
            if msg["event"] == "start":
                await ws.send(media(0.5))  # the greeting
            if len([m for m in seen if m["event"] == "dtmf"]) == 3:
                await ws.close(1000, "bye")

    doc = scenario(
        first_speaker="agent",
        user={"persona": {"name": "Ann"}, "script": [{"say": "My code.", "dtmf": "42#"}]},
    )
    async with serve(bot, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        agent = bridge_pb2.ConnectorConfig(kind="twilio", url=f"twilio+ws://127.0.0.1:{port}")
        run_id = await start_run(stub, [doc], max_auto_retries=0, agent_connector=agent)
        user = BotConfig(
            bridge.address, "user", lambda: play_script, run_filter=run_id, max_sessions=1,
            synth=BuzzSynthesiser(),
        )  # fmt: skip
        async with asyncio.timeout(40):
            events, _ = await asyncio.gather(watch(stub, run_id), run_bots(user, asyncio.Event()))
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED, [e.message for e in events]
    keys = [m for m in seen if m["event"] == "dtmf"]
    assert [k["dtmf"] for k in keys] == [
        {"track": "inbound_track", "digit": d} for d in ("4", "2", "#")
    ]
    sid = seen[1]["streamSid"]
    assert all(k["streamSid"] == sid for k in keys)
    numbers = [int(m["sequenceNumber"]) for m in seen if "sequenceNumber" in m]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    with RecordingReader(bridge.db_path) as r:
        (s,) = r.sessions(run_id)
        (sent,) = [e.payload for e in r.events(s.session_id, [EventKind.DTMF])]
        to_agent = r.read_channel(s.session_id, Channel.TO_AGENT)
    assert sent["digits"] == "42#" and sent["carried_as"] == "dtmf_messages"
    # Messages instead of tones: the agent's audio carries no keys.
    assert dtmf.detect(to_agent.samples, to_agent.sample_rate) == ""
    assert s.stop_reason == "end_tool"
