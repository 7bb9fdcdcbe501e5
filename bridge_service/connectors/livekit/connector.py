"""The LiveKit console connector: an unchanged LiveKit agent, one process per session.

``vae run --agent-connector livekit:path/to/agent.py`` (either side of a run)
starts, for each session, the agent file in LiveKit Agents' console mode::

    PYTHON -m livekit.agents console path/to/agent.py --connect-addr 127.0.0.1:PORT [ARGS]

and is the TCP peer that mode expects (the role the ``lk`` CLI plays for a
developer), speaking :mod:`.wire`. :mod:`.dial` starts the process and waits
for it to connect; this endpoint then gives the agent the session
(:mod:`.folder`: ``start.json``), sends the peer's frames as ``audio_input``
at 48 kHz (the console's wire rate: the bridge resamples to it), reads what
the agent sends (:mod:`.inbound`: its ``audio_output`` played as the
console's speaker does, session events turned into vae events), and at
SessionEnding asks ``get_chat_history`` (the final context) and reads the
agent's ``final_state.json``; ``close`` stops the process (:mod:`.process`).
This module is the transport and the watch on the process.

A process that exits mid-call ends the session ``agent_crashed``, one that
never speaks within ``speak_timeout_s`` ``agent_silent``, both with its
stderr tail recorded (:class:`BotExited`). A text session sends each turn as a
``run_input`` request with the agent's audio input and output switched off
(``update_io``); its answers come back as the assistant messages it adds.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator
from typing import Any

from vae.bridge_service.connectors.base import (
    BotExited,
    BotInfo,
    BotInput,
    BotProtocolError,
    BridgeOutput,
    Capabilities,
    PeerAudio,
    PeerText,
    SessionEndingOut,
    SessionStartInfo,
)
from vae.bridge_service.connectors.livekit import wire
from vae.bridge_service.connectors.livekit.folder import SessionFolder
from vae.bridge_service.connectors.livekit.inbound import AgentInbound
from vae.bridge_service.connectors.livekit.options import (
    WIRE_RATE,
    LivekitOptions,
)
from vae.bridge_service.connectors.livekit.playback import FRAME_MS
from vae.bridge_service.connectors.livekit.process import AgentProcess
from vae.recordings.models import Side

__all__ = ["LivekitEndpoint"]


class LivekitEndpoint:
    """One session's side played by a LiveKit agent process (a :class:`SideEndpoint`)."""

    capabilities = Capabilities(text=True)

    def __init__(
        self,
        role: Side,
        url: str,
        options: LivekitOptions,
        process: AgentProcess,
        stream: tuple[asyncio.StreamReader, asyncio.StreamWriter],
        folder: SessionFolder,
    ) -> None:
        self.role = role
        self.url = url
        self.options = options
        self.process = process
        self.folder = folder
        self.send_rate = options.send_rate
        self.receive_rate = WIRE_RATE
        self.bot = BotInfo("livekit-agents", "", {"connector": "livekit", "url": url})
        self._pb = wire.protocol()
        self._reader, self._writer = stream
        self._early: list[Any] = []
        self._ids = itertools.count(1)
        #: What the agent sends, read (its speaker, events, text turns, our requests).
        self._in = AgentInbound(role, options, self._pb, self._playback_finished)
        self._started = asyncio.Event()
        self._ending = asyncio.Event()
        self._closed = False

    # ------------------------------------------------------------ handshake
    async def handshake(self, timeout_s: float) -> None:
        """Ask ``get_framework_info``; what arrives first is kept for the session."""
        request_id = await self._request(
            "info", get_framework_info=self._pb.SessionRequest.GetFrameworkInfo()
        )
        async with asyncio.timeout(timeout_s):
            while True:
                message = await wire.read(self._reader, self.options.max_message_bytes)
                if message is None:
                    raise BotProtocolError("console", "the agent closed the connection at once")
                if (
                    message.WhichOneof("message") == "response"
                    and message.response.request_id == request_id
                ):
                    self._in.requests.pop(request_id, None)
                    info = message.response.get_framework_info
                    self.bot = BotInfo(
                        "livekit-agents",
                        info.sdk_version,
                        {
                            "connector": "livekit",
                            "url": self.url,
                            "sdk": info.sdk,
                            "pid": str(self.process.pid),
                        },
                    )
                    return
                self._early.append(message)

    async def _request(self, purpose: str, **body: Any) -> str:
        request_id = f"vae-{purpose}-{next(self._ids)}"
        self._in.requests[request_id] = purpose
        request = self._pb.SessionRequest(request_id=request_id, **body)
        await self._send(self._pb.AgentSessionMessage(request=request))
        return request_id

    async def _send(self, message: Any) -> None:
        self._writer.write(wire.encode(message))
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()

    # ------------------------------------------------------------ agent -> bridge
    async def receive(self) -> AsyncIterator[BotInput]:
        waits = [asyncio.ensure_future(e.wait()) for e in (self._started, self._ending)]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
        for message in self._early:
            for item in self._in.handle(message):
                yield item
        self._early.clear()
        async for item in self._loop():
            yield item

    async def _loop(self) -> AsyncIterator[BotInput]:
        t0 = started = time.monotonic()
        n = 0
        recv: asyncio.Future[Any] | None = None
        exited = asyncio.ensure_future(self.process.exited.wait())
        ending = asyncio.ensure_future(self._ending.wait())
        history = asyncio.ensure_future(self._in.history_done.wait())
        try:
            while True:
                if self._ending.is_set() and (self._in.history_done.is_set() or exited.done()):
                    break
                now = time.monotonic()
                if not self._ending.is_set():
                    if not self._in.spoke and now - started > self.options.speak_timeout_s:
                        raise self._silent()
                    due = t0 + n * FRAME_MS / 1000
                    if not self._in.text and now >= due:
                        for item in self._in.play(n):
                            yield item
                        n += 1
                        continue
                    timeout = max(0.0, due - now) if not self._in.text else 0.25
                else:
                    timeout = 0.25
                if recv is None:
                    recv = asyncio.ensure_future(
                        wire.read(self._reader, self.options.max_message_bytes)
                    )
                waits = {recv, *(f for f in (exited, ending, history) if not f.done())}
                await asyncio.wait(
                    waits,
                    timeout=timeout,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if recv.done():
                    message = await self._result(recv, exited)
                    recv = None
                    if message is None:
                        await self._gone(exited)
                        break
                    for item in self._in.handle(message):
                        yield item
                elif exited.done() and not self._ending.is_set():
                    raise self._crashed()
        finally:
            for future in (recv, exited, ending, history):
                if future is not None:
                    future.cancel()
                    with contextlib.suppress(BaseException):
                        await future
        if self._ending.is_set():
            yield self.folder.final(self._in.history)

    async def _result(self, recv: asyncio.Future[Any], exited: asyncio.Future[Any]) -> Any:
        """The message read; a message cut short by the process dying is a crash, not bad input."""
        try:
            return recv.result()  # BotProtocolError: the session ends bot_error
        except BotProtocolError:
            if not self._ending.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(exited), 0.5)
                if exited.done():
                    raise self._crashed() from None
            raise

    async def _gone(self, exited: asyncio.Future[Any]) -> None:
        """The agent closed the connection: a crash if its process ends too (soon)."""
        if self._ending.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(exited), 2.0)
        if exited.done():
            raise self._crashed()
        # Still running but gone from the line: the session records the bot as disconnected.

    def _crashed(self) -> BotExited:
        how = self.process.how_it_ended()
        detail = f"the agent process (pid {self.process.pid}) {how} mid-call"
        return BotExited("agent_crashed", detail, self.process.tail.text())

    def _silent(self) -> BotExited:
        what = "answered no text turn" if self._in.text else "sent no audio"
        detail = f"the agent {what} within speak_timeout_s ({self.options.speak_timeout_s:g} s)"
        return BotExited("agent_silent", detail, self.process.tail.text())

    def _playback_finished(self) -> None:
        """Tell the agent a played message is done, as the console's speaker does."""
        done = self._pb.AgentSessionMessage.ConsoleIO.AudioPlaybackFinished()
        self._writer.write(wire.encode(self._pb.AgentSessionMessage(audio_playback_finished=done)))

    # ------------------------------------------------------------ bridge -> agent
    async def send(self, message: BridgeOutput) -> bool:
        if self._closed:
            return False
        if isinstance(message, PeerAudio):
            if self._writer.transport.get_write_buffer_size() > 1_000_000:
                return False  # the agent is not reading: drop audio, never control
            frame = self._pb.AgentSessionMessage.ConsoleIO.AudioFrame(
                data=message.pcm, sample_rate=WIRE_RATE, num_channels=1,
                samples_per_channel=len(message.pcm) // 2,
            )  # fmt: skip
            self._writer.write(wire.encode(self._pb.AgentSessionMessage(audio_input=frame)))
            return True
        if isinstance(message, PeerText):
            await self._request(
                "text", run_input=self._pb.SessionRequest.RunInput(text=message.text)
            )
            return True
        if isinstance(message, SessionStartInfo):
            await self._start(message)
        elif isinstance(message, SessionEndingOut):
            if self.options.fetch_history and not self.process.exited.is_set():
                await self._request(
                    "history", get_chat_history=self._pb.SessionRequest.GetChatHistory()
                )
            else:
                self._in.history_done.set()
            self._ending.set()
        return True

    async def _start(self, start: SessionStartInfo) -> None:
        self.folder.start(start)
        if start.modality == "text":
            self._in.text = True
            update = self._pb.SessionRequest.UpdateIO()
            update.input.audio_enabled = False
            update.output.audio_enabled = False
            await self._request("text-io", update_io=update)
        self._started.set()

    async def close(self, error: BotProtocolError | None = None) -> None:
        if self._closed:
            return
        self._closed = True
        self._ending.set()
        with contextlib.suppress(Exception):
            self._writer.close()
        try:
            await self.process.stop(self.options.stop_timeout_s)
        finally:
            self.folder.remove()
