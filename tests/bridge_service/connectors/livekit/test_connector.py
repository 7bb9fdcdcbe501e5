"""The LiveKit console connector against a stand-in console agent (fast, no LiveKit start-up).

The stand-in (``fake_console``) speaks the real console wire with livekit's
generated classes; the real agent through the real LiveKit is
``tests/interop/test_livekit.py``. Here: a call from dial to close, each
way a process can fail (and the stop reason and stderr tail it gives), and
hostile console messages.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vae.bridge_service.connectors.base import (
    BotAudio,
    BotEvent,
    BotExited,
    BotInput,
    BotProtocolError,
    BotStartError,
    ConnectorConfig,
    ConnectorOptionsError,
    FinalStatePart,
    PeerAudio,
    SessionEndingOut,
    SessionStartInfo,
    check_connector,
)
from vae.bridge_service.connectors.livekit.connector import LivekitEndpoint
from vae.bridge_service.connectors.livekit.dial import dial
from vae.recordings.models import EventKind, Side

FAKE = Path(__file__).resolve().parent / "fake_console"
RATE = 48000


def config(tmp_path: Path, mode: str, **options: Any) -> ConnectorConfig:
    agent = tmp_path / "agent.py"
    agent.write_text("# the stand-in console ignores its agent file\n")
    env = {"PYTHONPATH": str(FAKE), "FAKE_CONSOLE_MODE": mode}
    return ConnectorConfig(
        "livekit", f"livekit:{agent}", {"python": sys.executable, "env": env, **options}
    )


def start_info(modality: str = "audio") -> SessionStartInfo:
    return SessionStartInfo(
        "run", "sess", "scenario", 1, Side.AGENT, "restaurant", "Be a host.", {},
        {"bookings": []}, [], {}, 30_000, False, RATE, modality=modality,
    )  # fmt: skip


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def caller(endpoint: LivekitEndpoint) -> None:
    """One second of a loud tone, then silence, on the open-mic clock (16 ms frames)."""
    n = RATE * 16 // 1000
    t = np.arange(n) / RATE
    loud = (np.sin(2 * np.pi * 300 * t) * 6000).astype("<i2").tobytes()
    quiet = bytes(2 * n)
    t0 = time.monotonic()
    for seq in range(400):
        pcm = loud if 60 <= seq < 120 else quiet
        await endpoint.send(PeerAudio(seq, seq * n, pcm, time.time_ns()))
        await asyncio.sleep(max(0.0, t0 + (seq + 1) * 0.016 - time.monotonic()))


async def run_call(endpoint: LivekitEndpoint, end_on_tool: bool = True) -> list[BotInput]:
    got: list[BotInput] = []
    ended, ending = 0.0, False
    await endpoint.send(start_info())
    try:
        async with asyncio.TaskGroup() as tg:
            feeding = tg.create_task(caller(endpoint))
            async for item in endpoint.receive():
                got.append(item)
                if isinstance(item, BotEvent) and item.kind is EventKind.END_CONVERSATION:
                    ended = time.monotonic()
                if ended and time.monotonic() - ended > 1.0 and not ending:  # the end grace
                    ending = await endpoint.send(SessionEndingOut("end_tool", "", 5000))
                if isinstance(item, FinalStatePart):
                    break
            feeding.cancel()
    except BaseExceptionGroup as group:  # what receive raised, as the session sees it
        raise group.exceptions[0] from None
    return got


async def test_a_call_from_dial_to_close(tmp_path: Path) -> None:
    endpoint = await dial(config(tmp_path, "speak"), Side.AGENT)
    pid = endpoint.process.pid
    assert alive(pid)
    assert (endpoint.bot.name, endpoint.bot.version) == ("livekit-agents", "0.0")
    assert endpoint.bot.labels["pid"] == str(pid)
    try:
        async with asyncio.timeout(30):
            got = await run_call(endpoint)
    finally:
        await endpoint.close()
    assert not alive(pid)
    assert not endpoint.folder.path.exists()  # the session's folder is removed with it
    audio = [i for i in got if isinstance(i, BotAudio)]
    samples = np.frombuffer(b"".join(a.pcm for a in audio), "<i2")
    frames = samples[: len(samples) // 320 * 320].reshape(-1, 320).astype(np.float64)
    voiced = np.sqrt((frames**2).mean(axis=1)) > 2000
    # Played in real time at the send rate: the 1 s greeting, then the 0.8 s answer.
    assert endpoint.send_rate == 16000
    assert 1.7 < voiced.sum() * 0.02 < 1.9
    calls = [i.payload for i in got if isinstance(i, BotEvent) and i.kind is EventKind.TOOL_CALL]
    assert [(c["name"], c["arguments"], c["is_write"]) for c in calls] == [
        ("book_table", {"party_size": 2}, True),
        ("end_call", {}, False),
    ]
    assert calls[0]["result"] == "ok"
    assert isinstance(got[-1], FinalStatePart) and got[-1].done
    assert got[-1].context is not None and got[-1].context.data == b"[]"


async def test_an_agent_that_raises_at_import_is_a_start_failure(tmp_path: Path) -> None:
    with pytest.raises(BotStartError) as caught:
        await dial(config(tmp_path, "import_error"), Side.AGENT)
    error = caught.value
    assert error.stop_reason == "agent_start_failed"
    assert "exited with status 1" in str(error)
    assert "RuntimeError: fake agent: cannot import my model" in error.log_tail
    assert "Traceback" in error.log_tail


async def test_an_agent_that_never_connects_is_stopped_at_the_start_timeout(
    tmp_path: Path,
) -> None:
    t0 = time.monotonic()
    with pytest.raises(BotStartError, match=r"did not connect within start_timeout_s \(1 s\)"):
        await dial(config(tmp_path, "hang", start_timeout_s=1.0, stop_timeout_s=1.0), Side.AGENT)
    assert time.monotonic() - t0 < 5
    # Its process went with it: nothing runs the stand-in now.
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    assert not [p for p in pids if alive(int(p)) and _is_fake(int(p), "hang")]


def _is_fake(pid: int, mode: str) -> bool:
    try:
        env = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return f"FAKE_CONSOLE_MODE={mode}".encode() in env


async def test_an_agent_that_never_speaks_ends_agent_silent(tmp_path: Path) -> None:
    endpoint = await dial(config(tmp_path, "silent", speak_timeout_s=1.0), Side.AGENT)
    try:
        await endpoint.send(start_info())
        with pytest.raises(BotExited) as caught:
            async with asyncio.timeout(10):
                async for _ in endpoint.receive():
                    pass
    finally:
        await endpoint.close()
    assert caught.value.stop_reason == "agent_silent"
    assert "sent no audio within speak_timeout_s (1 s)" in caught.value.detail
    assert "I never speak" in caught.value.log_tail


async def test_an_agent_that_exits_mid_call_ends_agent_crashed(tmp_path: Path) -> None:
    endpoint = await dial(config(tmp_path, "crash"), Side.AGENT)
    try:
        with pytest.raises(BotExited) as caught:
            async with asyncio.timeout(20):
                await run_call(endpoint)
    finally:
        await endpoint.close()
    assert caught.value.stop_reason == "agent_crashed"
    assert "exited with status 3 mid-call" in caught.value.detail
    assert "boom, giving up mid-call" in caught.value.log_tail


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        ("oversized", "a 2097152-byte message exceeds the 1048576-byte limit"),
        ("unknown", "unexpected console message none vae knows"),
        ("garbage", "not an AgentSessionMessage"),
    ],
)
async def test_hostile_console_messages_are_refused(
    tmp_path: Path, mode: str, problem: str
) -> None:
    endpoint = await dial(config(tmp_path, mode), Side.AGENT)
    pid = endpoint.process.pid
    try:
        with pytest.raises(BotProtocolError, match=problem):
            async with asyncio.timeout(20):
                await run_call(endpoint)
    finally:
        await endpoint.close()
    assert not alive(pid)


def test_wrong_options_are_refused_before_any_process_starts(tmp_path: Path) -> None:
    good = config(tmp_path, "speak")
    check_connector(good)
    cases = [
        ({"python": "/no/such/python"}, "is not an executable"),
        ({"env": {"A": 1}}, "env must be a JSON object of strings"),
        ({"speak_timeout_s": 0}, "speak_timeout_s must be positive"),
        ({"bogus": 1}, "unknown option 'bogus'"),
    ]
    for options, message in cases:
        with pytest.raises(ConnectorOptionsError, match=message):
            check_connector(ConnectorConfig("livekit", good.url, {**good.options, **options}))
    with pytest.raises(ConnectorOptionsError, match="no agent file"):
        check_connector(ConnectorConfig("livekit", "livekit:/no/such/agent.py", good.options))
