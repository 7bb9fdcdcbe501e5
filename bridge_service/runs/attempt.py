"""One conversation between a user bot and an agent bot.

A session is one ``asyncio.TaskGroup``: a reader per side and the open-mic
clock (:mod:`vae.bridge_service.clocks.open_mic`). Inputs are handled by
:class:`~vae.bridge_service.session.inputs.SessionIO`;
this module owns the lifecycle: start (record the attempt, send
``SessionStart``), the end conditions, and the ending handshake
(``SessionEnding`` -> ``FinalState`` -> ``SessionEnded``). Whatever ends the
session — a bot, a timeout, a cancel, shutdown, a failure — the attempt is
recorded as ended with its stop reason and turn counts. A session the bridge
itself fails skips the handshake: it is recorded ``bridge_error`` and each bot
still connected gets ``SessionEnded`` with that reason.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from vae.bridge_service.clocks.lockstep import LockStepClock
from vae.bridge_service.clocks.open_mic import OpenMicClock
from vae.bridge_service.clocks.text_clock import RealTextClock, VirtualTextClock
from vae.bridge_service.config import StopReason
from vae.bridge_service.connectors.base import SessionEndedOut, SessionEndingOut, SideEndpoint
from vae.bridge_service.runs.redacted import redact_if_asked
from vae.bridge_service.session.caller_record import caller_record
from vae.bridge_service.session.ending import EndRequest, is_clean_exit
from vae.bridge_service.session.final_state_worker import store_final_state
from vae.bridge_service.session.inputs import SessionIO
from vae.bridge_service.session.plan import SessionPlan, start_info
from vae.bridge_service.tools.backend import Reservation, ToolBackend
from vae.bridge_service.tools.session import finish_backend, start_backend
from vae.recordings.models import EventKind, SessionRecord, SessionStatus, Side
from vae.recordings.write.writer import RecordingWriter

log = logging.getLogger("vae.bridge.session")

#: What drives a session's time: the open mic (real-time audio), the lock-step
#: clock (virtual audio) or a text clock (real or virtual).
SessionClock = OpenMicClock | RealTextClock | VirtualTextClock


def clock_for(io: SessionIO) -> SessionClock:
    """The clock driver of a session, by its modality and clock (one seam: session_time)."""
    if io.text:
        return VirtualTextClock(io) if io.time.virtual else RealTextClock(io)
    return LockStepClock(io) if io.time.virtual else OpenMicClock(io)


@dataclass(frozen=True)
class SessionResult:
    session_id: str
    stop_reason: StopReason
    detail: str
    clean_exit: bool
    user_turns: int
    agent_turns: int
    started_ns: int
    ended_ns: int

    @property
    def duration_s(self) -> float:
        return (self.ended_ns - self.started_ns) / 1e9


class Session:
    def __init__(
        self,
        plan: SessionPlan,
        user: SideEndpoint,
        agent: SideEndpoint,
        writer: RecordingWriter,
        reserved: Reservation | None = None,
    ) -> None:
        self.plan = plan
        self.writer = writer
        self.io = SessionIO(plan, {Side.USER: user, Side.AGENT: agent}, writer)
        self.result: SessionResult | None = None
        self.clock: SessionClock | None = None
        #: The session's tool backend, when the run or the scenario asks for one.
        self.backend: ToolBackend | None = None
        self._reserved = reserved  # its port, bound before the agent was dialled

    @property
    def session_id(self) -> str:
        return self.plan.session_id

    def request_end(self, reason: StopReason, detail: str = "") -> None:
        """End the session from outside (cancel, shutdown)."""
        self.io.request_end(EndRequest(reason, detail))

    async def run(self) -> SessionResult:
        io, plan = self.io, self.plan
        await asyncio.to_thread(redact_if_asked, self.writer, plan.run_id, plan.settings)
        await self.writer.start_session(
            SessionRecord(
                session_id=plan.session_id,
                run_id=plan.run_id,
                scenario_name=plan.scenario.name,
                attempt=plan.attempt,
                status=SessionStatus.RUNNING,
                started_ns=io.started_ns,
                user_bot=io.endpoints[Side.USER].bot.to_dict(),
                agent_bot=io.endpoints[Side.AGENT].bot.to_dict(),
                audio=io.audio_info(),
                retry_reason=plan.retry_reason,
            )
        )
        await self.writer.put_session_mode(
            plan.session_id, modality=plan.settings.modality, clock=plan.settings.clock
        )
        if plan.served_by is not None:
            await self.writer.put_session_bridge(plan.session_id, plan.served_by.to_dict())
        caller = caller_record(plan.scenario.user.extras, plan.settings.modality)
        if caller is not None:
            await self.writer.put_session_caller(plan.session_id, caller)
        if (line := io.line_info()) is not None:
            await self.writer.put_session_line(plan.session_id, line)
        try:
            self.backend = await start_backend(plan, io, self._reserved)
            addresses = self.backend.addresses if self.backend is not None else None
            async with asyncio.TaskGroup() as tg:
                readers = [tg.create_task(io.read(side)) for side in (Side.USER, Side.AGENT)]
                for side in (Side.USER, Side.AGENT):
                    receive_rate = io.endpoints[side].receive_rate
                    info = start_info(plan, side, receive_rate, io.framing[side], addresses)
                    await io.send(side, info)
                clock = self.clock = clock_for(io)
                ticking = tg.create_task(clock.run())
                end = await io.wait_end()
                await clock.stop(ticking, graceful=end.graceful)
                await self._handshake(end)
                for task in readers:
                    task.cancel()
        except Exception as exc:
            # The bridge itself failed (not a bot): record it as such, never as a clean end,
            # and tell the bots the session is over (their streams then end without error).
            if self.result is None:
                error = exc.exceptions[0] if isinstance(exc, ExceptionGroup) else exc
                detail = f"the bridge failed: {type(error).__name__}: {error}"
                try:
                    await self._record_end(EndRequest(StopReason.BRIDGE_ERROR, detail))
                except Exception:
                    log.exception("session %s: recording its bridge_error failed", self.session_id)
                for side in io.live_sides():
                    await io.send(side, SessionEndedOut(str(StopReason.BRIDGE_ERROR), False))
            raise
        except BaseException:
            if self.result is None:
                # Cancelled from outside (the bridge is going away): still record the end.
                try:
                    await self._record_end(
                        EndRequest(StopReason.SHUTDOWN, "session task cancelled")
                    )
                except Exception:
                    log.exception("session %s: recording its shutdown failed", self.session_id)
            raise
        finally:
            if self.backend is not None:
                await self.backend.close()  # a no-op once the end was recorded
            await io.close_all()
        assert self.result is not None
        return self.result

    async def _handshake(self, end: EndRequest) -> None:
        io, plan = self.io, self.plan
        timeout = plan.bridge.final_state_timeout_s
        live = io.live_sides()
        for side in live:
            await io.send(side, SessionEndingOut(str(end.reason), end.detail, int(timeout * 1000)))
        waits = [io.final_done[side].wait() for side in live]
        try:
            await asyncio.wait_for(asyncio.gather(*waits), timeout)
        except TimeoutError:
            for side in io.live_sides():
                if not io.final_done[side].is_set():
                    await io.record(
                        side,
                        EventKind.SESSION_ERROR,
                        {"error": f"no complete final state within {timeout:g} s"},
                    )
        await self._record_end(end)
        assert self.result is not None
        for side in io.live_sides():
            await io.send(side, SessionEndedOut(str(end.reason), self.result.clean_exit))

    async def _record_end(self, end: EndRequest) -> None:
        io, plan = self.io, self.plan
        reported = io.collectors[Side.AGENT].has_state
        for side, collector in io.collectors.items():
            problems = await store_final_state(
                collector,
                self.writer,
                session_id=plan.session_id,
                side=side,
                received_ns=io.time_ns(),
                order_independent=plan.scenario.order_independent_lists,
            )
            for problem in problems:
                await io.record(side, EventKind.MALFORMED_EVENT, {"problem": problem})
        if self.backend is not None:  # its DB is the agent's final state (tools/session.py)
            await finish_backend(self.backend, plan, io, self.writer, agent_reported_state=reported)
        await io.drops.flush()
        await io.recorder.close()
        if self.clock is not None:
            await self.writer.put_session_clock(plan.session_id, self.clock.stats())
        if io.line_transform is not None and (line := io.line_info()) is not None:
            await self.writer.put_session_line(plan.session_id, line)  # with its packet counts
        ended_ns = io.time_ns()
        clean = is_clean_exit(end.reason, plan.settings.end_policy, io.last_turn_side())
        turns = io.turns()
        await self.writer.end_session(
            plan.session_id,
            ended_ns=ended_ns,
            stop_reason=str(end.reason),
            stop_detail=end.detail,
            clean_exit=clean,
            user_turns=turns[Side.USER],
            agent_turns=turns[Side.AGENT],
        )
        self.result = SessionResult(
            session_id=plan.session_id,
            stop_reason=end.reason,
            detail=end.detail,
            clean_exit=clean,
            user_turns=turns[Side.USER],
            agent_turns=turns[Side.AGENT],
            started_ns=io.started_ns,
            ended_ns=ended_ns,
        )
        log.info(
            "session %s ended: %s (%s), turns user=%d agent=%d",
            plan.session_id,
            end.reason,
            end.detail,
            turns[Side.USER],
            turns[Side.AGENT],
        )
