"""What ``vae load`` starts when no ``--bridge`` is given: a bridge, the callers, the agent.

As ``vae demo`` does, the bridge runs in this process (gRPC on a loopback
port; ``--workers N`` adds N worker processes that run the sessions) with
the scripted reference callers as in-process gRPC clients, one stream per
call at the largest level. The agent is either reached by the bridge
(``--agent-connector``) or the reference agent, started as a child process
(``vae bot agent --capacity N ...``) so that its CPU is its own and never
counted as the harness's. Before the first step, every caller and agent
stream has joined (within :data:`JOIN_TIMEOUT_S`, or the command fails
naming who did not come).

With ``--bridge`` nothing is started: the bridge and its bots are the
user's, and the harness processes are those the sessions name.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from vae.bridge_service.config import BridgeSettings
from vae.bridge_service.server import BridgeServer
from vae.recordings.backends.locator import Locator
from vae.recordings.models import Side

#: Seconds the callers and the reference agent have to join before the first step.
JOIN_TIMEOUT_S = 60.0


@dataclass
class AgentSpec:
    """The reference agent ``vae load`` starts (when there is no ``--agent-connector``)."""

    capacity: int | None = None
    base_latency_s: float | None = None
    slow_down_s: float = 0.0

    def describe(self) -> str:
        parts = ["the reference agent"]
        if self.capacity is not None:
            parts.append(f"capacity {self.capacity}")
        if self.base_latency_s is not None:
            parts.append(f"base latency {self.base_latency_s:g} s")
        if self.slow_down_s:
            parts.append(f"slowing {self.slow_down_s:g} s per call")
        return ", ".join(parts)


@dataclass
class Target:
    """Where the steps run and which harness processes to watch."""

    address: str
    token: str | None = None
    tls_ca: Path | None = None
    bridge: BridgeServer | None = None
    #: Harness processes on this machine seen serving sessions: label -> pid.
    seen: dict[str, int] = field(default_factory=dict)

    @property
    def in_process(self) -> bool:
        return self.bridge is not None

    @property
    def workers(self) -> int:
        return self.bridge.worker_count if self.bridge is not None else 0

    def processes(self) -> dict[str, int]:
        """Harness processes to measure now: label (as sessions name them) -> pid."""
        if self.bridge is None:
            return dict(self.seen)
        found = {f"bridge pid {os.getpid()}": os.getpid()}
        if self.bridge.workers is not None:
            for w in self.bridge.workers.workers:
                if w.pid:
                    found[w.label] = w.pid
        return found

    def role(self, label: str) -> str:
        if not label.startswith("worker") and self.in_process:
            return "bridge + callers" if self.workers <= 1 else "front door + callers"
        return "worker" if label.startswith("worker") else "bridge"

    def learn(self, bridges: dict[str, dict[str, Any]]) -> None:
        """Note the processes of a ``--bridge`` on this machine, from sessions' records."""
        from vae.scorer_service.load.calls import process_label

        here = socket.gethostname()
        for bridge in bridges.values():
            if bridge.get("host") == here and isinstance(bridge.get("pid"), int):
                self.seen[process_label(bridge)] = int(bridge["pid"])


@dataclass
class HarnessOptions:
    db: Locator
    largest: int
    workers: int
    tts: str
    #: None: the agent comes through a connector.
    agent: AgentSpec | None
    log_level: str = "warning"


def agent_command(address: str, spec: AgentSpec, streams: int, tts: str) -> list[str]:
    """The reference agent's command line (a child ``vae bot agent``)."""
    cmd = [sys.executable, "-m", "vae.cli.main", "bot", "agent", "--bridge", address,
           "--concurrency", str(streams), "--tts", tts, "--name", "vae-load-agent"]  # fmt: skip
    if spec.capacity is not None:
        cmd += ["--capacity", str(spec.capacity)]
    if spec.base_latency_s is not None:
        cmd += ["--base-latency", str(spec.base_latency_s)]
    if spec.slow_down_s:
        cmd += ["--slow-down", str(spec.slow_down_s)]
    return cmd


@contextlib.asynccontextmanager
async def in_process(options: HarnessOptions) -> AsyncIterator[Target]:
    """A bridge here, the callers here, the reference agent in a child process."""
    from vae.bots.brains.scripted import play_script
    from vae.bots.runner import BotConfig, run_bots
    from vae.bots.sound.speech import default_synthesiser

    try:
        synth = await asyncio.to_thread(default_synthesiser, options.tts)
    except OSError as exc:
        raise click.UsageError(f"--tts {options.tts}: {exc}") from exc
    settings = BridgeSettings(address="127.0.0.1:0")
    async with BridgeServer(options.db, settings, workers=options.workers) as bridge:
        stop = asyncio.Event()
        callers = BotConfig(
            bridge.address, "user", lambda: play_script, concurrency=options.largest,
            name="vae-load-caller", version="1", synth=synth,
        )  # fmt: skip
        with tempfile.TemporaryFile() as agent_log:
            agent: asyncio.subprocess.Process | None = None
            async with asyncio.TaskGroup() as tg:
                tg.create_task(run_bots(callers, stop))
                try:
                    if options.agent is not None:
                        cmd = agent_command(bridge.address, options.agent, options.largest,
                                            options.tts)  # fmt: skip
                        # Its own session: a Ctrl-C in the terminal is vae load's to handle
                        # (it cancels the step), not the agent's; vae load stops it after.
                        agent = await asyncio.create_subprocess_exec(
                            *cmd, stdin=asyncio.subprocess.DEVNULL,
                            stdout=asyncio.subprocess.DEVNULL, stderr=agent_log,
                            start_new_session=True,
                        )  # fmt: skip
                    await _joined(bridge, options.largest, agent, agent_log)
                    yield Target(bridge.address, bridge=bridge)
                finally:
                    stop.set()
                    if agent is not None:
                        await _stop(agent)


async def _joined(
    bridge: BridgeServer, streams: int, agent: asyncio.subprocess.Process | None, log: Any
) -> None:
    """Wait until every caller (and reference-agent) stream waits at the bridge."""
    roles = [Side.USER] + ([Side.AGENT] if agent is not None else [])
    waiting = asyncio.ensure_future(
        asyncio.gather(*(bridge.pool.until_waiting(r, streams) for r in roles))
    )
    exited = asyncio.ensure_future(agent.wait()) if agent is not None else None
    pending = {waiting} | ({exited} if exited is not None else set())
    done, _ = await asyncio.wait(pending, timeout=JOIN_TIMEOUT_S,
                                 return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
    for task in pending - done:
        task.cancel()
    if exited is not None and exited in done:
        log.seek(0)
        tail = log.read()[-2000:].decode(errors="replace").strip()
        raise click.ClickException(f"the reference agent exited ({exited.result()}): {tail}")
    if waiting not in done:
        raise click.ClickException(
            f"the callers{' and the reference agent' if agent else ''} did not join the bridge "
            f"within {JOIN_TIMEOUT_S:.0f} s"
        )


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Ask the child agent to stop (SIGTERM), kill it if it has not within 10 s."""
    if process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        await asyncio.wait_for(process.wait(), 10)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
