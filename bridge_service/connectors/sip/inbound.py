"""Taking agents' calls: ``vae bridge serve --sip-listen HOST:PORT`` and ``sip-inbound:``.

Outbound agents (reminders, surveys, collections) place calls themselves. A
bridge started with ``--sip-listen`` runs one :class:`InboundListener`; a run
with ``--agent-connector sip-inbound:`` makes each of its sessions wait (up
to the ``wait_s`` option) for the agent's call and answer it:

- a call carrying ``X-Vae-Session`` goes to that session;
- else the dialled user part (or ``X-Vae-Scenario``) is a scenario name: the
  call goes to the session of that scenario that has waited longest;
- a call no session waits for rings for ``hold_s`` (a session may be about to
  start: a run's concurrency limit) and is then refused 480.

A session whose agent never calls ends ``peer_never_joined``; its detail
names what was waited for and the last messages the listener refused
(malformed requests, INVITEs with no common codec), so a broken agent says
why it never got through. The listener's address is loopback or whatever
HOST the bridge was given: that is what its Via, Contact and SDP carry.
"""

from __future__ import annotations

import asyncio
import logging
import time
import urllib.parse
from collections import deque
from dataclasses import dataclass, field

from vae.bridge_service.connectors.base import (
    CallRefused,
    ConnectorConfig,
    ConnectorOptionsError,
    DialFor,
)
from vae.bridge_service.connectors.sip.endpoint import ControlCodec, SipEndpoint
from vae.bridge_service.connectors.sip.options import SipOptions, parse_options
from vae.recordings.models import Side
from vae.sip import SipUnavailable, require
from vae.sip.agent import UserAgent
from vae.sip.incoming import IncomingCall
from vae.sip.info import BOT_PACKAGE
from vae.sip.transport import Peer

log = logging.getLogger("vae.bridge.sip")
NO_LISTENER = (
    "sip-inbound: this bridge takes no SIP calls; start it with "
    "`vae bridge serve --sip-listen HOST:PORT` (and pip install 'vae[sip]')"
)


@dataclass
class _Waiter:
    target: DialFor
    found: asyncio.Future[IncomingCall] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class InboundListener:
    def __init__(self, host: str, port: int, hold_s: float = 30.0) -> None:
        self.hold_s = hold_s
        self.agent = UserAgent(host, port, on_invite=self._invite, on_refused=self._refused)
        self._waiting: list[_Waiter] = []
        self._unclaimed: list[IncomingCall] = []
        self.refusals: deque[str] = deque(maxlen=5)

    @property
    def address(self) -> str:
        return f"{self.agent.address()}:{self.agent.port}"

    async def start(self) -> InboundListener:
        await self.agent.start()
        return self

    async def close(self) -> None:
        for waiter in self._waiting:
            if not waiter.found.done():
                waiter.found.cancel()
        await self.agent.close()

    # ---------------------------------------------------------------- calls in
    def _refused(self, what: str, peer: Peer) -> None:
        self.refusals.append(f"{time.strftime('%H:%M:%S')} {what}")

    def _invite(self, incoming: IncomingCall) -> None:
        for waiter in self._waiting:
            if not waiter.found.done() and _matches(incoming, waiter.target):
                self._waiting.remove(waiter)
                waiter.found.set_result(incoming)
                return
        incoming.ring()
        self._unclaimed.append(incoming)
        loop = asyncio.get_running_loop()
        loop.call_later(self.hold_s, self._expire, incoming)

    def _expire(self, incoming: IncomingCall) -> None:
        if incoming in self._unclaimed:
            self._unclaimed.remove(incoming)
            what = f"no session waited for the call to {incoming.user!r} " \
                   f"(X-Vae-Session {incoming.header('X-Vae-Session')!r})"  # fmt: skip
            self.refusals.append(f"{time.strftime('%H:%M:%S')} refused 480: {what}")
            incoming.reject(480, "No Session Waits For This Call")

    async def take(self, target: DialFor, wait_s: float) -> IncomingCall:
        """The agent's call for ``target``: one already ringing, or the next that matches."""
        for incoming in list(self._unclaimed):
            if incoming.gone.is_set():
                self._unclaimed.remove(incoming)
            elif _matches(incoming, target):
                self._unclaimed.remove(incoming)
                return incoming
        waiter = _Waiter(target)
        self._waiting.append(waiter)
        try:
            return await asyncio.wait_for(waiter.found, wait_s)
        except TimeoutError:
            refused = "; ".join(self.refusals) or "none"
            raise CallRefused(
                "peer_never_joined",
                f"no SIP call from the agent for session {target.session_id} (scenario "
                f"{target.scenario_name!r}) within {wait_s:g} s at sip:{self.address}; "
                f"refused meanwhile: {refused}",
            ) from None
        finally:
            if waiter in self._waiting:
                self._waiting.remove(waiter)


def _matches(incoming: IncomingCall, target: DialFor) -> bool:
    session = incoming.header("X-Vae-Session")
    if session:
        return session == target.session_id
    scenario = incoming.header("X-Vae-Scenario") or urllib.parse.unquote(incoming.user)
    return scenario == target.scenario_name


#: The listener of this bridge process (``vae bridge serve --sip-listen``).
_current: list[InboundListener] = []


def install(listener: InboundListener | None) -> None:
    _current.clear()
    if listener is not None:
        _current.append(listener)


def current() -> InboundListener | None:
    return _current[0] if _current else None


def check_config(config: ConnectorConfig) -> tuple[SipOptions, list[tuple[str, str]]]:
    try:
        require()
    except SipUnavailable as exc:
        raise ConnectorOptionsError(str(exc)) from exc
    parsed = parse_options(config.options)
    if config.url.rstrip(":") != "sip-inbound" or config.pool_urls:
        raise ConnectorOptionsError(
            f"sip-inbound connector: the URL is `sip-inbound:` (got {config.url!r}); the bridge's "
            "--sip-listen address is where agents call"
        )
    if current() is None:
        raise ConnectorOptionsError(NO_LISTENER)
    return parsed


async def take_call(config: ConnectorConfig, role: Side, codec: ControlCodec) -> SipEndpoint:
    options, _ = check_config(config)
    listener = current()
    if listener is None or config.session is None:
        raise ConnectorOptionsError(NO_LISTENER)
    incoming = await listener.take(config.session, options.wait_s)
    call = await incoming.answer(accept_info=(BOT_PACKAGE,), jitter_ms=options.jitter_ms)
    call.media.max_packets_per_s = options.max_rtp_packets_per_s
    log.info("session %s: took the agent's SIP call %s", config.session.session_id,
             call.dialog.call_id)  # fmt: skip
    return SipEndpoint(call, role, options, codec, f"sip-inbound:{listener.address}")
