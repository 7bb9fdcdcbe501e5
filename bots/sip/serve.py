"""``vae bot agent --sip-listen HOST:PORT``: answer every call and play its session.

Any user part is answered (the session comes from the bridge's INFO, not the
dialled name), and any number of calls at once: each is a task of one
TaskGroup. A call is answered at once (200 OK, ``Recv-Info: vae-bridge``),
its session starts when the bridge's ``session_start`` arrives (a caller
that sends none within :data:`START_WITHIN_S` is hung up: the reference bots
play scenarios, and only a vae bridge gives them one), and it ends with the
bridge's ``session_ended`` or a BYE.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from vae.bots.client import BotStream, Brain, SessionOutcome
from vae.bots.messages import session_info
from vae.bots.sip.line import SipLine
from vae.bots.sound.listening import ListenSettings
from vae.bots.sound.speech import Synthesiser
from vae.sip.agent import UserAgent
from vae.sip.incoming import IncomingCall
from vae.sip.info import BRIDGE_PACKAGE

log = logging.getLogger("vae.bots.sip")
START_WITHIN_S = 10.0


async def play_call(
    incoming: IncomingCall,
    role: str,
    brain: Brain,
    synth: Synthesiser,
    *,
    name: str = "vae-reference-bot",
    listen: ListenSettings | None = None,
) -> SessionOutcome | None:
    call = await incoming.answer(accept_info=(BRIDGE_PACKAGE,))
    line = SipLine(call)
    stream = BotStream(None, role, brain, synth, name=name, listen=listen,  # type: ignore[arg-type]
                       supports_text=False, supports_virtual_clock=False)  # fmt: skip
    stream._outbox = line.outbox  # the stream writes where the line reads
    line.set_send_rate(synth.sample_rate)
    receive_rate: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    outcome: SessionOutcome | None = None
    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(line.pump_in(receive_rate))
            sender = tg.create_task(line.pump_out())
            first = await asyncio.wait_for(line.read(), START_WITHIN_S)
            if first is not None and first.HasField("session_start"):
                info = session_info(first.session_start)
                receive_rate.set_result(info.receive_rate)
                log.info("SIP call %s: session %s (%s)", call.dialog.call_id, info.session_id,
                         info.scenario_name)  # fmt: skip
                outcome = await stream._play(line, info)
            else:
                log.warning("SIP call %s: no vae session started; hanging up",
                            call.dialog.call_id)  # fmt: skip
            line.outbox.put_nowait(None)
            await sender
            await call.bye("the session is over")
            line.ended = True
    except TimeoutError:
        log.warning("SIP call %s: no session_start within %g s", call.dialog.call_id,
                    START_WITHIN_S)  # fmt: skip
    finally:
        line.ended = True
        if call.hangup is None:
            call.bye_now("the bot stopped")
        call.close()
    return outcome


async def serve_sip(
    listen: tuple[str, int],
    role: str,
    brain: Callable[[], Brain],
    synth: Synthesiser,
    stop: asyncio.Event,
    *,
    sessions: int = 0,
    name: str = "vae-reference-bot",
    on_ready: Callable[[str], None] | None = None,
    listen_settings: ListenSettings | None = None,
) -> list[SessionOutcome]:
    """Answer calls on ``listen`` until ``stop`` is set (or ``sessions`` calls were played)."""
    calls: asyncio.Queue[IncomingCall] = asyncio.Queue()
    agent = UserAgent(listen[0], listen[1], user="agent", on_invite=calls.put_nowait)
    outcomes: list[SessionOutcome] = []
    taken = 0
    async with agent, asyncio.TaskGroup() as tg:
        if on_ready is not None:
            on_ready(f"sip:agent@{agent.address()}:{agent.port}")

        async def one(incoming: IncomingCall) -> None:
            try:
                outcome = await play_call(incoming, role, brain(), synth, name=name,
                                          listen=listen_settings)  # fmt: skip
            except (ConnectionError, OSError) as exc:
                log.warning("SIP call failed: %s", exc)
                return
            if outcome is not None:
                outcomes.append(outcome)

        stopping = asyncio.ensure_future(stop.wait())
        try:
            while not (sessions and taken >= sessions):
                getting = asyncio.ensure_future(calls.get())
                done, _ = await asyncio.wait({getting, stopping},
                                             return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
                if getting not in done:
                    getting.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await getting
                    break
                taken += 1
                tg.create_task(one(getting.result()))
        finally:
            stopping.cancel()
    return outcomes
