"""The LiveKit console connector: an unchanged LiveKit agent, one process per session.

``vae run --agent-connector livekit:path/to/agent.py`` (either side of a run)
starts, for each session, the agent file in LiveKit Agents' console mode::

    PYTHON -m livekit.agents console path/to/agent.py --connect-addr 127.0.0.1:PORT [ARGS]

and is the TCP peer that mode expects (the role the ``lk`` CLI plays for a
developer), speaking :mod:`.wire`:

1. dial: listen on a free loopback port, start the process (:mod:`.process`),
   wait for it to connect (``start_timeout_s``) and ask ``get_framework_info``
   (recorded as the bot's name and version). A process that exits or never
   connects is :class:`BotStartError`: the attempt ends ``agent_start_failed``
   with the tail of its stderr;
2. SessionStart: ``start.json`` (the scenario's prompt, tools, initial state)
   is written to the session's folder, ``VAE_SESSION_DIR`` in the agent's
   environment; an agent that writes ``final_state.json`` there gives vae its
   final state;
3. audio both ways: the peer's frames go out as ``audio_input`` at 48 kHz
   (the console's wire rate; the bridge resamples to it); the agent's
   ``audio_output`` is resampled to ``send_rate`` and played in real time
   (a TTS burst is queued, ``audio_playback_clear`` drops what has not
   played — a barge-in — and ``audio_playback_finished`` answers each
   ``audio_playback_flush`` once its audio has played, as the console's
   speaker does);
4. session events become vae events (:mod:`.events`); an end tool ends the call;
5. SessionEnding: ``get_chat_history`` is the final context, ``final_state.json``
   the final state; then the process is stopped (SIGTERM, SIGKILL after
   ``stop_timeout_s``).

A process that exits mid-call ends the session ``agent_crashed``, one that
never speaks within ``speak_timeout_s`` ``agent_silent``, both with its
stderr tail recorded (:class:`BotExited`). A text session sends each turn as a
``run_input`` request with the agent's audio output switched off
(``update_io``); its answers come back as the assistant messages it adds.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from vae.bridge_service.connectors.base import (
    BotAudio,
    BotEvent,
    BotExited,
    BotInfo,
    BotInput,
    BotProtocolError,
    BotStartError,
    BotText,
    BridgeOutput,
    Capabilities,
    ConnectorConfig,
    ConnectorOptionsError,
    FinalStatePart,
    JsonPiece,
    PeerAudio,
    PeerText,
    SessionEndingOut,
    SessionStartInfo,
)
from vae.bridge_service.connectors.livekit import wire
from vae.bridge_service.connectors.livekit.events import EventTranslator
from vae.bridge_service.connectors.livekit.options import (
    WIRE_RATE,
    LivekitOptions,
    parse_options,
)
from vae.bridge_service.connectors.livekit.process import AgentProcess, launcher
from vae.bridge_service.connectors.pipecat.audio import BotAudioIn
from vae.bridge_service.connectors.twilio.playout import Playout
from vae.recordings.models import EventKind, Side

__all__ = ["LivekitEndpoint", "agent_path", "check_config", "dial"]

FRAME_MS = 20
_FLUSH = "flush"
#: Largest final_state.json read back.
MAX_STATE_BYTES = 16 << 20


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
        folder: Path,
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
        self._requests: dict[str, str] = {}
        self._in = BotAudioIn(options.send_rate, FRAME_MS)
        self._frame = options.send_rate * FRAME_MS // 1000
        self._playout = Playout(self._frame)
        self._max_queue = int(options.max_queue_s * options.send_rate)
        self.events = EventTranslator(role, options, self._pb, lambda: self._played)
        self._played = 0
        self._text = False
        self._turns = 0
        self._spoke = False
        self._started = asyncio.Event()
        self._ending = asyncio.Event()
        self._history: Any = None
        self._history_done = asyncio.Event()
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
                    self._requests.pop(request_id, None)
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
        self._requests[request_id] = purpose
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
            for item in self._handle(message):
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
        history = asyncio.ensure_future(self._history_done.wait())
        try:
            while True:
                if self._ending.is_set() and (self._history_done.is_set() or exited.done()):
                    break
                now = time.monotonic()
                if not self._ending.is_set():
                    if not self._spoke and now - started > self.options.speak_timeout_s:
                        raise self._silent()
                    due = t0 + n * FRAME_MS / 1000
                    if not self._text and now >= due:
                        for item in self._play(n):
                            yield item
                        n += 1
                        continue
                    timeout = max(0.0, due - now) if not self._text else 0.25
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
                    for item in self._handle(message):
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
            yield self._final_part()

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
        what = "answered no text turn" if self._text else "sent no audio"
        detail = f"the agent {what} within speak_timeout_s ({self.options.speak_timeout_s:g} s)"
        return BotExited("agent_silent", detail, self.process.tail.text())

    def _play(self, n: int) -> list[BotInput]:
        frame = self._playout.pop()
        self._played += self._frame
        items: list[BotInput] = [BotAudio(n, n * self._frame, frame.pcm, time.time_ns())]
        if frame.marks:
            finished = self._pb.AgentSessionMessage.ConsoleIO.AudioPlaybackFinished()
            for _ in frame.marks:
                self._writer.write(
                    wire.encode(self._pb.AgentSessionMessage(audio_playback_finished=finished))
                )
        return items

    def _handle(self, message: Any) -> list[BotInput]:
        kind = message.WhichOneof("message")
        if kind == "audio_output":
            return self._audio(message.audio_output)
        if kind == "audio_playback_flush" and self._text:
            # Nothing plays in a text session: what it said is done at once.
            finished = self._pb.AgentSessionMessage.ConsoleIO.AudioPlaybackFinished()
            self._writer.write(
                wire.encode(self._pb.AgentSessionMessage(audio_playback_finished=finished))
            )
            return []
        if kind == "audio_playback_flush":
            for chunk in self._in.drain():  # the segment's last samples, then its mark
                self._playout.push(chunk.pcm)
            self._playout.mark(_FLUSH)
            return []
        if kind == "audio_playback_clear":
            list(self._in.drain())
            dropped, _ = self._playout.clear()
            ms = dropped * 1000 / self.send_rate
            payload = {
                "level": "info",
                "message": f"playback cleared: {ms:.0f} ms of agent audio not played",
            }
            return [BotEvent(EventKind.LOG, time.time_ns(), payload)]
        if kind == "response":
            return self._response(message.response)
        items: list[BotInput] = list(self.events.translate(message.event))
        if self._text and len(self.events.said) > self._turns:
            for text in self.events.said[self._turns :]:
                self._spoke = True
                items.append(BotText(text, 0, self._turns, time.time_ns()))
                self._turns += 1
        return items

    def _audio(self, frame: Any) -> list[BotInput]:
        if self._text:
            return []
        try:
            chunks = list(self._in.frame(frame.data, frame.sample_rate, frame.num_channels))
        except ValueError as exc:
            raise BotProtocolError("console.audio_output", str(exc)) from exc
        self._spoke = True
        for chunk in chunks:
            if self._playout.queued_samples + len(chunk.pcm) // 2 > self._max_queue:
                payload = {"reason": "agent_faster_than_real_time", "samples": len(chunk.pcm) // 2}
                return [BotEvent(EventKind.AUDIO_DROPPED, time.time_ns(), payload)]
            self._playout.push(chunk.pcm)
        return []

    def _response(self, response: Any) -> list[BotInput]:
        purpose = self._requests.pop(response.request_id, "")
        if response.HasField("error"):
            message = f"the agent refused {purpose or 'a request'}: {response.error}"
            if purpose == "history":
                self._history_done.set()
            return [
                BotEvent(EventKind.LOG, time.time_ns(), {"level": "warning", "message": message})
            ]
        if purpose == "history":
            from google.protobuf.json_format import MessageToDict

            self._history = [MessageToDict(item) for item in response.get_chat_history.items]
            self._history_done.set()
        return []

    def _final_part(self) -> FinalStatePart:
        state = None
        path = self.folder / "final_state.json"
        with contextlib.suppress(OSError, ValueError):
            if path.stat().st_size <= MAX_STATE_BYTES:
                state = json.loads(path.read_text())
        return FinalStatePart(_piece(state), _piece(self._history), done=True)

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
                self._history_done.set()
            self._ending.set()
        return True

    async def _start(self, start: SessionStartInfo) -> None:
        document = {
            "session_id": start.session_id,
            "run_id": start.run_id,
            "scenario": start.scenario_name,
            "role": str(start.role),
            "domain": start.domain,
            "system_prompt": start.system_prompt,
            "tools": start.tools,
            "initial_state": start.initial_state,
            "modality": start.modality,
        }
        (self.folder / "start.json").write_text(json.dumps(document, default=str))
        if start.modality == "text":
            self._text = True
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
            shutil.rmtree(self.folder, ignore_errors=True)


def _piece(value: Any) -> JsonPiece | None:
    if value is None:
        return None
    return JsonPiece(0, json.dumps(value, default=str).encode(), True)


def agent_path(url: str) -> Path:
    """The agent file of a ``livekit:PATH`` URL (``PATH`` alone is accepted too)."""
    return Path(url.removeprefix("livekit:")).expanduser()


def check_config(config: ConnectorConfig) -> tuple[LivekitOptions, dict[str, str]]:
    """Options and environment of ``config``; :class:`ConnectorOptionsError` for wrong ones."""
    options, env = parse_options(config.options)
    wire.protocol()
    for url in config.urls:
        path = agent_path(url)
        if not url or not path.is_file():
            raise ConnectorOptionsError(
                f"livekit connector: no agent file at {url!r} (livekit:PATH/agent.py)"
            )
    return options, env


async def dial(config: ConnectorConfig, role: Side) -> LivekitEndpoint:
    """Start the agent of ``config.url`` in console mode and wait for it to connect."""
    options, extra_env = check_config(config)
    path = agent_path(config.url).resolve()
    folder = Path(tempfile.mkdtemp(prefix="vae-livekit-"))
    connected: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]]
    connected = asyncio.get_running_loop().create_future()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if connected.done():
            writer.close()  # one agent, one connection
        else:
            connected.set_result((reader, writer))

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    argv = [*launcher(options.python), "-m", "livekit.agents", "console", str(path),
            "--connect-addr", f"127.0.0.1:{port}", *options.args]  # fmt: skip
    env = {**os.environ, **extra_env, "VAE_SESSION_DIR": str(folder), "PYTHONUNBUFFERED": "1"}
    process: AgentProcess | None = None
    try:
        try:
            process = await AgentProcess.start(argv, env, str(path.parent), options.log_lines)
        except OSError as exc:  # the interpreter vanished or cannot run: no retry helps
            raise BotStartError(f"cannot start the agent {path}: {exc}") from exc
        exited: asyncio.Future[Any] = asyncio.ensure_future(process.exited.wait())
        waits: set[asyncio.Future[Any]] = {connected, exited}
        try:
            await asyncio.wait(
                waits, timeout=options.start_timeout_s, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            exited.cancel()
        if not connected.done():
            why = (
                process.how_it_ended()
                if process.exited.is_set()
                else (f"did not connect within start_timeout_s ({options.start_timeout_s:g} s)")
            )
            raise BotStartError(f"the agent {path} (pid {process.pid}) {why}", process.tail.text())
        endpoint = LivekitEndpoint(role, config.url, options, process, connected.result(), folder)
        try:
            await endpoint.handshake(min(10.0, options.start_timeout_s))
        except (BotProtocolError, TimeoutError) as exc:
            raise BotStartError(
                f"the agent {path} (pid {process.pid}) connected but did not answer "
                f"get_framework_info ({exc or 'timed out'})",
                process.tail.text(),
            ) from exc
        return endpoint
    except BaseException:
        if connected.done() and not connected.cancelled():
            connected.result()[1].close()
        else:
            connected.cancel()
        if process is not None:
            await process.stop(options.stop_timeout_s)
        shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        server.close()
