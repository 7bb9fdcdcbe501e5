"""Bad input: a clear status naming what was wrong, recorded, and no harm to other sessions."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import numpy as np
import pytest

from tests.bridge_service.bots import TestBot, fmt, tone
from tests.bridge_service.conftest import scenario, start_run, watch
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.read.reader import RecordingReader

USER, AGENT = common_pb2.ROLE_USER, common_pb2.ROLE_AGENT


def join(role: int = USER, send: Any = None, receive: Any = None) -> bridge_pb2.BotMessage:
    return bridge_pb2.BotMessage(
        join=bridge_pb2.Join(
            role=role,
            send_format=send or fmt(16000),  # type: ignore[arg-type]
            receive_format=receive or fmt(16000),
        )
    )


@pytest.mark.parametrize(
    ("first", "needle"),
    [
        (
            bridge_pb2.BotMessage(audio=common_pb2.AudioChunk(pcm=b"\0\0")),
            "first message must be Join",
        ),
        (join(role=0), "join.role"),
        (join(send=fmt(16000, encoding=0)), "join.send_format.encoding"),
        (join(receive=fmt(96000)), "join.receive_format.sample_rate_hz"),
        (join(send=fmt(16000, channels=2)), "join.send_format.channels"),
    ],
    ids=["not-join", "unknown-role", "encoding", "rate", "stereo"],
)
async def test_join_refused(bridge: BridgeServer, first: Any, needle: str) -> None:
    got = await TestBot(bridge.address, USER, join=first).run()
    assert got.status == grpc.StatusCode.INVALID_ARGUMENT
    assert needle in got.details
    assert bridge.pool.waiting() == 0


async def good_user(bot: TestBot) -> None:
    await bot.speak(tone(0.6, 16000, 300))


async def good_agent(bot: TestBot) -> None:
    await bot.speak(tone(0.6, 16000, 500))
    await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)


async def odd_bytes(bot: TestBot) -> None:
    await bot.audio(b"\x01\x02\x03")


async def oversized(bot: TestBot) -> None:
    await bot.audio(bytes(30_000))


async def second_join(bot: TestBot) -> None:
    await bot.send(join())


async def flood(bot: TestBot) -> None:
    await bot.speak(tone(4.0, 16000), realtime=False)
    await bot.speak(tone(0.3, 16000))


async def gap(bot: TestBot) -> None:
    await bot.audio(tone(0.02, 16000).tobytes())
    await bot.audio(tone(0.02, 16000).tobytes(), sequence=5)
    await bot.speak(tone(0.3, 16000))


async def malformed(bot: TestBot) -> None:
    await bot.speak(tone(0.2, 16000))
    await bot.event(tool_call=common_pb2.ToolCall(call_id="x", name="book", arguments_json="{bad"))
    await bot.speak(tone(0.2, 16000))


async def vanish(bot: TestBot) -> None:
    """The bot's process dies mid-call: its RPC is cancelled, not closed."""
    await bot.speak(tone(0.2, 16000))
    for task in asyncio.all_tasks():
        if task.get_name() == "bad-bot":
            task.cancel()


async def sequence_backwards(bot: TestBot) -> None:
    await bot.speak(tone(0.1, 16000))
    await bot.audio(tone(0.02, 16000).tobytes(), sequence=0)


async def offset_backwards(bot: TestBot) -> None:
    await bot.speak(tone(0.1, 16000))
    chunk = common_pb2.AudioChunk(sequence=100, sample_offset=0, pcm=bytes(640))
    await bot.send(bridge_pb2.BotMessage(audio=chunk))


async def early_final_state(bot: TestBot) -> None:
    await bot.speak(tone(0.1, 16000))
    state = common_pb2.JsonChunk(offset=0, data=b"{}", last=True)
    await bot.send(bridge_pb2.BotMessage(final_state=bridge_pb2.FinalState(state=state, done=True)))


async def empty_message(bot: TestBot) -> None:
    await bot.speak(tone(0.1, 16000))
    await bot.send(bridge_pb2.BotMessage())


async def args_not_object(bot: TestBot) -> None:
    await bot.speak(tone(0.2, 16000))
    await bot.event(
        tool_call=common_pb2.ToolCall(call_id="x", name="book", arguments_json="[1,2,3]")
    )
    await bot.speak(tone(0.2, 16000))


async def event_flood(bot: TestBot) -> None:
    # A burst within one second spans at most two one-second windows: one holds > 500.
    await bot.speak(tone(0.1, 16000))
    for i in range(1002):
        await bot.event(metric=common_pb2.Metric(name="ttfb", value=float(i)))


Case = tuple[Callable[[TestBot], Awaitable[None]], dict[str, Any], str, str, str]
CASES: dict[str, Case] = {
    # behaviour, bot kwargs, expected stop reason, recorded event kind, status detail / notice
    "odd-bytes": (odd_bytes, {}, "bot_error", "session_error", "audio.pcm: odd byte count 3"),
    "oversized": (oversized, {}, "bot_error", "session_error", "30000 bytes exceeds"),
    "second-join": (second_join, {}, "bot_error", "session_error", "Join must be the first"),
    "flood": (flood, {}, "end_tool", "audio_dropped", "dropped"),
    "sequence-gap": (gap, {}, "end_tool", "sequence_gap", "expected sequence 1, got 5"),
    "malformed-json": (malformed, {}, "end_tool", "malformed_event", "not valid JSON"),
    "sequence-backwards": (
        sequence_backwards,
        {},
        "bot_error",
        "session_error",
        "sequence numbers must increase",
    ),
    "offset-backwards": (
        offset_backwards,
        {},
        "bot_error",
        "session_error",
        "offsets must not go backwards",
    ),
    "final-state-in-session": (
        early_final_state,
        {},
        "bot_error",
        "session_error",
        "final_state is not valid in state in_session",
    ),
    "empty-message": (
        empty_message,
        {},
        "bot_error",
        "session_error",
        "an empty BotMessage is not valid in state in_session",
    ),
    "arguments-not-object": (
        args_not_object,
        {},
        "end_tool",
        "malformed_event",
        "must be a JSON object, got list",
    ),
    "event-flood": (event_flood, {}, "bot_error", "session_error", "max_events_per_s"),
    "vanishes": (vanish, {}, "bot_disconnected", "", ""),
    "stops-reading": (
        good_user,
        {"stall_s": 2.5, "receive_rate": 48000, "channel_options": [("grpc.http2.bdp_probe", 0)]},
        "end_tool",
        "audio_dropped",
        "",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_bad_bot_never_disturbs_another_session(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub, case: str
) -> None:
    behaviour, kwargs, reason, kind, needle = CASES[case]
    good_run = await start_run(stub, [scenario("good")], max_auto_retries=0)
    bad_run = await start_run(stub, [scenario("bad")], max_auto_retries=0, max_duration_s=4)
    good = [
        TestBot(bridge.address, USER, good_user, run_filter=good_run),
        TestBot(bridge.address, AGENT, good_agent, run_filter=good_run),
    ]

    async def slow_agent(bot: TestBot) -> None:
        await bot.speak(tone(2.0, 16000, 500))
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL)

    bad = TestBot(bridge.address, USER, behaviour, run_filter=bad_run, **kwargs)
    bad_peer = TestBot(bridge.address, AGENT, slow_agent, run_filter=bad_run)
    bad_task = asyncio.create_task(bad.run(), name="bad-bot")
    results = await asyncio.gather(
        *(b.run() for b in good),
        bad_peer.run(),
        watch(stub, good_run),
        watch(stub, bad_run),
        return_exceptions=False,
    )
    with contextlib.suppress(asyncio.CancelledError):
        await bad_task
    assert results[3][-1].status == bridge_pb2.RUN_STATUS_COMPLETED  # the good run
    with RecordingReader(bridge.db_path) as reader:
        (good_s,) = reader.sessions(good_run)
        assert good_s.stop_reason == "end_tool" and good_s.clean_exit
        user_pcm = b"".join(x.pcm for x in reader.segments(good_s.session_id, "user"))
        assert user_pcm == bytes(good[0].sent_pcm)
        (bad_s,) = reader.sessions(bad_run)
        assert bad_s.stop_reason == reason, bad_s.stop_detail
        events = reader.events(bad_s.session_id)
        if kind:
            hits = [e for e in events if e.kind == kind]
            assert hits, [e.kind for e in events]
            text = str([e.payload for e in hits])
        if reason == "bot_error":
            limit = needle.startswith("max_")
            code = grpc.StatusCode.RESOURCE_EXHAUSTED if limit else grpc.StatusCode.INVALID_ARGUMENT
            assert bad.got.status == code
            assert needle in bad.got.details and needle in text
            assert bad_peer.got.ending.reason == bridge_pb2.STOP_REASON_BOT_ERROR
        elif case == "stops-reading":
            assert any(e.payload.get("reason") == "slow_reader" for e in hits)
        elif case != "vanishes":
            assert any(needle in n.message for n in bad.got.notices), bad.got.notices
            assert needle in text or case == "flood"
        if case == "flood":
            # Everything the bot sent is recorded, even what could not be delivered.
            sent = b"".join(x.pcm for x in reader.segments(bad_s.session_id, "user"))
            assert sent == bytes(bad.sent_pcm)
            dropped = sum(int(e.payload["samples"]) for e in hits)
            assert dropped > 16000  # well over a second of the 4 s burst
            # Aggregated: one row per cause and second, with counts and example ranges.
            assert len(hits) <= 6, len(hits)
            assert sum(int(e.payload["count"]) for e in hits) > len(hits)
            assert all(e.payload["sample_ranges"] for e in hits)
            assert np.any(bad.got.notices)
