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
from typing import Any

from websockets.asyncio.server import ServerConnection, serve

from bridge_service.connectors.base import (
    BotAudio,
    BotEvent,
    ConnectorConfig,
    FinalStatePart,
    PeerAudio,
    SessionEndingOut,
    SessionStartInfo,
)
from bridge_service.connectors.twilio import dial
from recordings.models import EventKind, Side


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
