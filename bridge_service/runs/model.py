"""The run manager's domain records: what WatchRun, GetRun and ListRuns report.

A live run is a :class:`RunState` in the bridge's memory (its progress events
kept so a late watcher sees the whole history); a finished or foreign run is
read back from the store (:func:`run_view`), so GetRun/ListRuns work for every
run in the database, whichever bridge process recorded it.
"""

from __future__ import annotations

import asyncio
import enum
import time
from dataclasses import dataclass, field

from vae.bridge_service.config import RunSettings
from vae.recordings.models import RunRecord, RunStatus, SessionMode, SessionRecord
from vae.recordings.read.bot_errors import bot_errors
from vae.recordings.read.reader import RecordingReader
from vae.recordings.scenarios.model import Scenario
from vae.recordings.stop_reasons import is_finished


class RunEventKind(enum.StrEnum):
    SESSION_STARTED = "session_started"
    SESSION_ENDED = "session_ended"
    SESSION_RETRYING = "session_retrying"
    RUN_FINISHED = "run_finished"


@dataclass(frozen=True)
class SessionSummary:
    run_id: str
    session_id: str
    scenario_name: str
    attempt: int
    stop_reason: str = ""
    clean_exit: bool = False
    user_turns: int = 0
    agent_turns: int = 0
    duration_s: float = 0.0
    status: str = "running"
    retry_reason: str = ""
    stop_detail: str = ""
    bot_errors: tuple[str, ...] = ()
    #: "audio"/"text" and "real"/"virtual": how the session ran.
    modality: str = "audio"
    clock: str = "real"
    #: The bridge process that served the attempt (``vae.bridge_service.identity``), if recorded.
    bridge: dict[str, object] | None = None

    @property
    def finished(self) -> bool:
        return is_finished(self.stop_reason)

    @classmethod
    def from_record(
        cls,
        s: SessionRecord,
        errors: list[str] | None = None,
        mode: SessionMode | None = None,
        bridge: dict[str, object] | None = None,
    ) -> SessionSummary:
        mode = mode or SessionMode()
        return cls(
            run_id=s.run_id,
            session_id=s.session_id,
            scenario_name=s.scenario_name,
            attempt=s.attempt,
            stop_reason=s.stop_reason or "",
            clean_exit=bool(s.clean_exit),
            user_turns=s.user_turns,
            agent_turns=s.agent_turns,
            duration_s=s.duration_s,
            status=str(s.status),
            retry_reason=s.retry_reason,
            stop_detail=s.stop_detail,
            bot_errors=tuple(errors or ()),
            modality=mode.modality,
            clock=mode.clock,
            bridge=bridge,
        )


@dataclass(frozen=True)
class RunEvent:
    kind: RunEventKind
    run_id: str
    scenarios_done: int
    scenarios_total: int
    message: str = ""
    session: SessionSummary | None = None
    status: RunStatus | None = None
    unix_ns: int = field(default_factory=time.time_ns)


@dataclass(frozen=True)
class RunView:
    run_id: str
    status: RunStatus
    options: dict[str, object]
    created_ns: int
    finished_ns: int
    scenarios_total: int
    scenarios_done: int
    vae_version: str
    sessions: list[SessionSummary]
    error: str = ""


@dataclass(frozen=True)
class Classification:
    scenario_name: str
    state: str  # completed | in_flight | fresh
    reason: str
    session_id: str = ""


@dataclass(eq=False)
class RunState:
    """A run this bridge process is executing."""

    run_id: str
    settings: RunSettings
    scenarios: list[Scenario]
    created_ns: int
    vae_version: str
    total: int
    #: Scenarios whose last attempt ran to a finished end (``vae.recordings.stop_reasons``).
    done: int = 0
    status: RunStatus = RunStatus.RUNNING
    finished_ns: int = 0
    events: list[RunEvent] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    shutting_down: bool = False
    #: Set when the store failed under this run: the run fails with this message.
    storage_error: str = ""
    task: asyncio.Task[None] | None = None
    #: Why the run failed, once it has (an exception while running it).
    error: str = ""
    #: One line per scenario that makes the run fail.
    failures: list[str] = field(default_factory=list)
    #: CancelRun with drain: start no new scenario (``vae.bridge_service.runs.pacing``).
    draining: bool = False
    #: Scenarios whose first attempt has started (the ramp-up counts them).
    started: int = 0
    #: Scenarios a drain left unstarted: dropped from the run when it ends.
    dropped: list[str] = field(default_factory=list)

    async def emit(self, event: RunEvent) -> None:
        async with self.changed:
            self.events.append(event)
            self.changed.notify_all()

    @property
    def finished(self) -> bool:
        return self.status not in (RunStatus.RUNNING, RunStatus.PENDING)


def run_view(reader: RecordingReader, record: RunRecord, live: RunState | None) -> RunView:
    """The run as GetRun, ListRuns and WatchRun report it, bot errors included."""
    sessions = reader.sessions(record.run_id)
    modes = reader.session_modes(record.run_id)
    bridges = reader.session_bridges(record.run_id)
    latest = reader.latest_attempts(record.run_id)
    total = len(reader.run_scenarios(record.run_id))
    done = sum(1 for s in latest.values() if is_finished(s.stop_reason))
    return RunView(
        run_id=record.run_id,
        status=live.status if live else record.status,
        options=record.options,
        created_ns=record.created_ns,
        finished_ns=(live.finished_ns if live else record.finished_ns) or 0,
        scenarios_total=total,
        scenarios_done=live.done if live else done,
        vae_version=record.vae_version,
        sessions=[
            SessionSummary.from_record(
                s,
                bot_errors(reader, s.session_id),
                modes.get(s.session_id),
                bridges.get(s.session_id),
            )
            for s in sessions
        ],
        error=live.error if live else record.error,
    )
