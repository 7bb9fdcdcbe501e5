"""One side of a session played by a SIP call (a :class:`SideEndpoint`), either direction.

- audio: the far end's RTP leaves the jitter buffer in 20 ms frames on the
  connector's real-time clock (8 kHz; the session resamples); the session's
  frames for the far end (8 kHz) go out as 20 ms G.711 packets;
- keys: the caller's ``dtmf`` steps go out as RFC 4733 events
  (``sends_dtmf_messages``); keys the far end sends are the caller's own
  presses when it plays the user, a logged fact when it plays the agent;
- hang-up: the far end's BYE is its hang-up (the agent's end tool, or the
  user hanging up); when the session ends first, vae sends BYE;
- RTP silence: no packet for ``rtp_timeout_s`` ends the session
  ``sip_rtp_timeout``; a flood lasting 2 s ends it ``bot_error``; other
  oddities of the stream (another source, a new SSRC, junk) are recorded as
  warnings and the call goes on;
- a far end that takes vae's INFO package (``Recv-Info: vae-bridge``,
  :mod:`vae.sip.info`) gets the session's control messages and sends its
  events and final state back; one that does not has no final state.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Protocol

from vae.bridge_service.connectors.base import (
    BotAudio,
    BotEvent,
    BotInfo,
    BotInput,
    BotProtocolError,
    BridgeOutput,
    DtmfOut,
    FinalStatePart,
    PeerAudio,
    SessionEndingOut,
    SessionStartInfo,
)
from vae.bridge_service.connectors.sip.options import SipOptions
from vae.recordings.models import EventKind, Side
from vae.sip.agent import UserAgent
from vae.sip.call import Call, Hangup, Info, Reinvited
from vae.sip.info import BOT_PACKAGE, BRIDGE_PACKAGE, CONTENT_TYPE
from vae.sip.media import MediaNotice

RATE = 8000
FRAME = 160
FRAME_S = FRAME / RATE
RTP_TIMEOUT_KIND = "sip_rtp_timeout"


class ControlCodec(Protocol):
    """Converts vae's control messages to and from INFO bodies (``edge/sip_wire.py``)."""

    def decode(self, body: bytes, side: Side) -> BotInput: ...

    def encode(self, message: BridgeOutput) -> bytes | None: ...


def _log(level: str, message: str, **fields: object) -> BotEvent:
    payload = {"level": level, "message": message, **fields}
    return BotEvent(EventKind.LOG, time.time_ns(), payload)


class SipEndpoint:
    sends_dtmf_messages = True

    def __init__(
        self,
        call: Call,
        role: Side,
        options: SipOptions,
        codec: ControlCodec,
        url: str,
        owned_agent: UserAgent | None = None,
    ) -> None:
        self.call, self.role, self.options, self.codec = call, role, options, codec
        self.send_rate = self.receive_rate = RATE
        negotiated = call.media.negotiated
        assert negotiated is not None
        direction = "outbound" if call.outbound else "inbound"
        self.bot = BotInfo("sip", "", {"connector": "sip", "url": url, "direction": direction,
                                       "codec": negotiated.codec,
                                       "call_id": call.dialog.call_id})  # fmt: skip
        #: The far end takes vae's control messages (and so sends its final state).
        self.vae_info = BRIDGE_PACKAGE in call.peer_accepts_info
        self._owned_agent = owned_agent
        self._started = asyncio.Event()
        self._ending = asyncio.Event()
        self._who = "agent" if role is Side.AGENT else "user"

    # ------------------------------------------------------------ far end -> bridge
    async def receive(self) -> AsyncIterator[BotInput]:
        await self._started.wait()
        loop = asyncio.get_running_loop()
        media = self.call.media
        t0 = loop.time()
        media.last_received = max(media.last_received, t0)  # the timeout counts from here
        n = 0
        timed_out = False
        while not self._ending.is_set():
            now = loop.time()
            due = t0 + n * FRAME_S
            if now >= due:
                yield BotAudio(n, n * FRAME, media.pop(FRAME), time.time_ns())
                n += 1
                silent = now - media.last_received
                if (
                    not timed_out
                    and self.call.hangup is None
                    and silent > self.options.rtp_timeout_s
                ):
                    timed_out = True
                    reason = f"no RTP from the {self._who} for {silent:.1f} s " \
                             f"(rtp_timeout_s {self.options.rtp_timeout_s:g})"  # fmt: skip
                    yield BotEvent(EventKind.END_CONVERSATION, time.time_ns(),
                                   {"kind": RTP_TIMEOUT_KIND, "reason": reason})  # fmt: skip
                continue
            with contextlib.suppress(TimeoutError):
                event = await asyncio.wait_for(self.call.events.get(), due - now)
                for item in self._on_event(event):
                    yield item
        async for item in self._final_state():
            yield item

    async def _final_state(self) -> AsyncIterator[BotInput]:
        """After SessionEnding: the far end's final state over INFO, if it takes part."""
        if not self.vae_info:
            yield FinalStatePart(done=True)
            return
        while not (self.call.events.empty() and self.call.hangup is not None):
            event = await self.call.events.get()
            for item in self._on_event(event):
                yield item
                if isinstance(item, FinalStatePart) and item.done:
                    return
        yield FinalStatePart(done=True)  # it hung up first: no (more) state

    def _on_event(self, event: object) -> list[BotInput]:
        if isinstance(event, Info) and event.package == BOT_PACKAGE:
            return [self.codec.decode(event.body, self.role)]
        if isinstance(event, Hangup):
            if not event.by_peer:
                return []
            kind = "agent_end_tool" if self.role is Side.AGENT else "user_hang_up"
            reason = f"the {self._who} hung up (BYE)"
            return [_log("info", f"SIP BYE from the {self._who}", sip_event="bye"),
                    BotEvent(EventKind.END_CONVERSATION, time.time_ns(),
                             {"kind": kind, "reason": reason})]  # fmt: skip
        if isinstance(event, Reinvited):
            return [_log("info", event.detail, sip_event="reinvite")]
        if isinstance(event, MediaNotice):
            return self._media(event)
        return []

    def _media(self, notice: MediaNotice) -> list[BotInput]:
        if notice.kind == "digit":
            if self.role is Side.USER:  # the caller pressed a key: carried to the agent
                return [BotEvent(EventKind.DTMF, time.time_ns(), {"digits": notice.key})]
            return [_log("info", f"the agent sent {notice.detail}", sip_event="dtmf",
                         digits=notice.key)]  # fmt: skip
        if notice.kind == "fatal_flood":
            return [_log("error", notice.detail, sip_event="rtp_flood"),
                    BotEvent(EventKind.END_CONVERSATION, time.time_ns(),
                             {"kind": "bot_error", "reason": notice.detail})]  # fmt: skip
        return [_log("warning", notice.detail, sip_event=f"rtp_{notice.kind}")]

    # ------------------------------------------------------------ bridge -> far end
    async def send(self, message: BridgeOutput) -> bool:
        call = self.call
        if isinstance(message, PeerAudio):
            if call.hangup is None:
                call.media.send_pcm(message.pcm)
            return True
        if isinstance(message, DtmfOut):
            if call.hangup is None:
                call.media.send_digits(message.digits, message.tone_ms, message.gap_ms)
            return True
        try:
            if isinstance(message, SessionEndingOut):
                self._ending.set()
                if not self.vae_info:
                    await call.bye("vae ended the session")
                    return True
            await self._info(message)
        finally:
            if isinstance(message, SessionStartInfo):
                self._started.set()
        return True

    async def _info(self, message: BridgeOutput) -> None:
        if not self.vae_info or self.call.hangup is not None:
            return
        body = self.codec.encode(message)
        if body is not None:
            await self.call.info(BRIDGE_PACKAGE, body, CONTENT_TYPE)

    async def close(self, error: BotProtocolError | None = None) -> None:
        self._started.set()
        self._ending.set()
        try:
            await self.call.bye("vae closed the session" if error is None else str(error))
        finally:
            self.call.close()
            if self._owned_agent is not None:
                await self._owned_agent.close()
