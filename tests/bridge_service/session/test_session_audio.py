"""A whole session through the bridge: audio, events and final states recorded."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import soxr

from tests.bridge_service.bots import TestBot, tone
from tests.bridge_service.conftest import scenario, start_run, watch
from vae.bridge.v1 import bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import Channel, EventKind, Side
from vae.recordings.read.reader import RecordingReader

USER, AGENT = common_pb2.ROLE_USER, common_pb2.ROLE_AGENT


def _snr_db(reference: np.ndarray, signal: np.ndarray) -> float:
    noise = signal.astype(np.float64) - reference.astype(np.float64)
    return 10 * np.log10(np.sum(reference.astype(np.float64) ** 2) / max(np.sum(noise**2), 1.0))


async def test_session_records_what_each_bot_sent(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    user_audio = tone(0.8, 16000, 300)
    agent_audio = tone(0.8, 24000, 500)

    async def user(bot: TestBot) -> None:
        await bot.speak(user_audio)
        await bot.event(
            transcript=common_pb2.Transcript(
                kind=common_pb2.TRANSCRIPT_KIND_SPOKEN, text="hello", is_final=True
            )
        )

    async def agent(bot: TestBot) -> None:
        await bot.speak(agent_audio)
        await bot.event(
            tool_call=common_pb2.ToolCall(
                call_id="c1",
                name="book",
                arguments_json='{"name": "Ann"}',
                result_json='{"ok": true}',
                side=AGENT,
                is_write=True,
            )
        )
        await bot.event(token_usage=common_pb2.TokenUsage(model="m", prompt_tokens=5))
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL, "done")

    run_id = await start_run(stub, [scenario()], inactivity_timeout_s=10)
    u = TestBot(bridge.address, USER, user, run_filter=run_id, final_state={"phone": "on"})
    a = TestBot(
        bridge.address,
        AGENT,
        agent,
        send_rate=24000,
        receive_rate=16000,
        run_filter=run_id,
        final_state={"bookings": [{"name": "Ann"}], "big": "x" * 500},
        context_history=[{"role": "assistant", "content": "hi"}],
    )
    got_u, got_a, events = await asyncio.gather(u.run(), a.run(), watch(stub, run_id))
    assert got_a.ended is not None and got_a.ended.clean_exit
    assert got_u.ended.reason == got_a.ended.reason
    assert events[-1].status == 3  # RUN_STATUS_COMPLETED

    with RecordingReader(bridge.db_path) as reader:
        (session,) = reader.sessions(run_id)
        assert session.stop_reason == "end_tool" and session.clean_exit is True
        assert session.user_turns >= 1 and session.agent_turns >= 1
        assert session.user_bot["name"] == "testbot" and session.audio["rates"]["agent"] == 24000
        # As sent: bit-exact, with each bot's own rate.
        user_rec = b"".join(s.pcm for s in reader.segments(session.session_id, Channel.USER))
        agent_rec = b"".join(s.pcm for s in reader.segments(session.session_id, Channel.AGENT))
        assert user_rec == bytes(u.sent_pcm) and agent_rec == bytes(a.sent_pcm)
        # Delivered to the agent: equal rates, so the user's audio arrives bit-exact.
        segs = reader.segments(session.session_id, Channel.TO_AGENT)
        to_agent = np.frombuffer(b"".join(s.pcm for s in segs), dtype="<i2")
        delivered = got_a.pcm()
        assert len(delivered) > 0 and np.array_equal(to_agent[: len(delivered)], delivered)
        start = int(np.flatnonzero(delivered)[0]) - 1  # the tone starts at 0
        assert np.array_equal(delivered[start : start + len(user_audio)], user_audio)
        # Delivered to the user: resampled 24k -> 16k by a stateful stream.
        heard = got_u.pcm()
        start = int(np.flatnonzero(np.abs(heard) > 50)[0])
        expected = soxr.resample(agent_audio, 24000, 16000, quality="HQ")
        # The edges ramp in and out of the filter; the stream holds back its delay (~13 ms).
        body = slice(200, len(expected) - 400)
        best = max(
            _snr_db(expected[body], heard[start + lag :][body])
            for lag in range(-40, 40)
            if start + lag >= 0
        )
        assert best > 30.0, f"resampled audio SNR {best:.1f} dB"

        kinds = [e.kind for e in reader.events(session.session_id)]
        for kind in (
            EventKind.TRANSCRIPT,
            EventKind.TOOL_CALL,
            EventKind.TOKEN_USAGE,
            EventKind.END_CONVERSATION,
        ):
            assert kind in kinds
        call = reader.events(session.session_id, [EventKind.TOOL_CALL])[0]
        assert call.payload["arguments"] == {"name": "Ann"} and call.bot_ns > 0
        finals = reader.final_states(session.session_id)
        assert finals[Side.AGENT].state["bookings"] == [{"name": "Ann"}]
        assert finals[Side.AGENT].context == [{"role": "assistant", "content": "hi"}]
        assert finals[Side.AGENT].state_hash and finals[Side.USER].state == {"phone": "on"}
    start_msg = got_a.start
    assert json.loads(start_msg.tools_json) == {"book": {"name": "who"}}
    assert "receptionist" in start_msg.system_prompt
