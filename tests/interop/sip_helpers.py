"""Helpers of the SIP tests: SIPp on free loopback ports, runs driven to their end, address checks.

Every address vae writes into SIP and SDP must be loopback in these tests
(:func:`assert_loopback_only` reads them back from SIPp's message trace), so
no test ever sends traffic off this machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.interop.conftest import start_run, watch_until_done
from tests.interop.sipp_scenarios import write
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer

_ADDRESS_LINES = re.compile(r"^(?:Via|v|Contact|m|c|o|Route|Record-Route)\s*[:=].*$", re.M | re.I)
_IPV4 = re.compile(r"\b(\d{1,3}(?:\.\d{1,3}){3})\b")


def free_udp_port() -> int:
    """A port free for UDP and TCP a moment ago (SIPp and SIP agents take both)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            u.bind(("127.0.0.1", 0))
            port = int(u.getsockname()[1])
            with socket.socket() as t:
                try:
                    t.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port


def assert_loopback_only(trace: str) -> None:
    """Every IPv4 address in Via, Contact, Route and SDP c=/o= lines is 127.x."""
    lines = _ADDRESS_LINES.findall(trace)
    assert lines, "no SIP messages in the trace"
    outside = [line for line in lines for ip in _IPV4.findall(line) if not ip.startswith("127.")]
    assert not outside, outside


async def _bound(port: int, within_s: float = 10.0) -> None:
    """Wait until something has bound UDP ``port`` (a bind of ours fails)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while loop.time() < deadline:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                return
        await asyncio.sleep(0.05)  # polling a condition, bounded by the deadline
    raise AssertionError(f"nothing bound 127.0.0.1:{port} within {within_s} s")


@dataclass
class Sipp:
    port: int
    trace: Path
    process: asyncio.subprocess.Process

    @property
    def uri(self) -> str:
        return f"sip:agent@127.0.0.1:{self.port}"

    async def finished(self, within_s: float = 20.0) -> int:
        return await asyncio.wait_for(self.process.wait(), within_s)

    def messages(self) -> str:
        return self.trace.read_text(errors="replace") if self.trace.exists() else ""


@contextlib.asynccontextmanager
async def sipp(
    tmp_path: Path, text: str, *args: str, name: str = "far_end", calls: int = 1,
    client_to: str = "", port: int = 0,
) -> AsyncIterator[Sipp]:  # fmt: skip
    """SIPp running scenario ``text`` on ``port`` (default: a free one) of loopback
    (``client_to``: it calls there)."""
    port, media = port or free_udp_port(), free_udp_port()
    scenario = write(tmp_path / f"{name}.xml", text)
    trace = tmp_path / f"{name}_messages.log"
    argv = ["sipp", *([client_to] if client_to else []), "-sf", str(scenario),
            "-i", "127.0.0.1", "-p", str(port), "-mi", "127.0.0.1", "-mp", str(media),
            "-m", str(calls), "-nostdin", "-trace_msg", "-message_file", str(trace),
            "-trace_err", "-error_file", str(tmp_path / f"{name}_errors.log"), *args]  # fmt: skip
    with (tmp_path / f"{name}.out").open("wb") as out:
        proc = await asyncio.create_subprocess_exec(*argv, stdout=out, stderr=out,
                                                    stdin=asyncio.subprocess.DEVNULL)  # fmt: skip
        try:
            if not client_to:
                await _bound(port)
            yield Sipp(port, trace, proc)
        finally:
            if proc.returncode is None:
                proc.terminate()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), 5)
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()


def caller_scenario(name: str, max_duration: float = 6.0, **extra: Any) -> dict[str, Any]:
    """A scenario whose scripted caller speaks first and keeps talking; agent over SIP."""
    return {
        "name": name,
        "max_duration": max_duration,
        "first_speaker": "user",
        "user": {
            "persona": {"name": "Ann"},
            "script": [{"say": "Hello, is anybody there?"}, {"say": "Hello again, anybody?"}],
        },
        "agent": {"persona": {"role": "phone agent"}},
        "success_signals": ["CLEAN_EXIT"],
        **extra,
    }


async def run_through(
    bridge: BridgeServer,
    stub: bridge_pb2_grpc.BridgeServiceStub,
    docs: list[dict[str, Any]],
    agent: bridge_pb2.ConnectorConfig,
    *,
    users: int = 1,
    within_s: float = 60.0,
    **options: Any,
) -> tuple[str, list[bridge_pb2.WatchRunResponse]]:
    """Start a run whose agent is ``agent``, with scripted gRPC callers, until it ends."""
    run_id = await start_run(stub, docs, agent_connector=agent, **options)
    stop = asyncio.Event()
    user = BotConfig(bridge.address, "user", lambda: play_script, run_filter=run_id,
                     concurrency=users)  # fmt: skip
    async with asyncio.timeout(within_s), asyncio.TaskGroup() as tg:
        tg.create_task(run_bots(user, stop))
        events = await watch_until_done(stub, run_id)
        stop.set()
    return run_id, events
