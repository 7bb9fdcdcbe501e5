"""The run manager: StartRun (new or resume, with a dry run), CancelRun, and
shutdown; GetRun, ListRuns and WatchRun are its read side
(:mod:`vae.bridge_service.runs.queries`).

A new run validates every scenario source and the options before anything is
recorded; it gets a readable id (``2024-06-01T10-22-33``, suffixed if taken)
unless named, and is recorded with its resolved options, tags, vae's version
and its scenarios frozen as run.

A resume (``resume`` = exact id or unique prefix) re-reads the frozen
scenarios and the recorded options (explicit new options override them),
classifies each scenario with ``vae.recordings.read.selection.classify_resume``, and
re-runs ``in_flight`` (marking the old attempt superseded, never deleting it)
and ``fresh`` ones; ``completed`` ones are kept, and a kept attempt that failed
the run (``bot_error``, ``bot_disconnected``) fails the resumed run too. With
``dry_run`` it only returns the classification.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import replace
from typing import Any

from vae.bridge_service.audio.line import check_lines
from vae.bridge_service.config import BridgeSettings, RunSettings, StopReason
from vae.bridge_service.replay.request import ReplayRequest, replay_options
from vae.bridge_service.runs import pacing
from vae.bridge_service.runs.dispatch import LiveSession
from vae.bridge_service.runs.execute import RunExecutor, Todo
from vae.bridge_service.runs.model import Classification, RunState, RunView
from vae.bridge_service.runs.outcome import kept_failure
from vae.bridge_service.runs.pairing import PairingPool
from vae.bridge_service.runs.queries import RunQueries
from vae.bridge_service.runs.redacted import redact_if_asked
from vae.bridge_service.runs.tiers import check_tiers
from vae.bridge_service.runs.trials import expand_trials
from vae.bridge_service.telemetry.hub import TraceHub
from vae.bridge_service.tools.session import check_run as check_tool_backend
from vae.recordings import identifiers
from vae.recordings.backends.locator import StoreRef
from vae.recordings.errors import ScenarioError, StorageError
from vae.recordings.models import RunRecord, RunScenario, RunStatus
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.replay_links import link_run
from vae.recordings.read.selection import ResumeState, classify_resume, new_run_id
from vae.recordings.scenarios.lint import load_sources
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.recordings.scenarios.sources import Source
from vae.recordings.write.writer import RecordingWriter

log = logging.getLogger("vae.bridge.runs")


class RunConflict(Exception):
    """The request clashes with the store's state (FAILED_PRECONDITION / ALREADY_EXISTS)."""

    def __init__(self, message: str, exists: bool = False) -> None:
        super().__init__(message)
        self.exists = exists


class RunManager(RunQueries):
    def __init__(
        self,
        writer: RecordingWriter,
        db_path: StoreRef,
        pool: PairingPool,
        bridge: BridgeSettings,
        vae_version: str,
    ) -> None:
        super().__init__(writer, db_path)
        self.bridge = bridge
        self.vae_version = vae_version
        #: Attempts running here or at a worker, for cancel, shutdown and storage failures.
        self.live_sessions: dict[str, LiveSession] = {}
        self.pool = pool
        self.executor = RunExecutor(writer, pool, bridge, self.live_sessions)
        #: OpenTelemetry in and out (set by the server); None: none.
        self.traces: TraceHub | None = None
        # Owned here, cancelled by shutdown(): ends everything on a storage failure.
        self._storage_watch = asyncio.create_task(self._watch_storage(), name="storage-watch")

    async def _watch_storage(self) -> None:
        """A failed store ends live sessions with ``storage_error`` and fails their runs."""
        await self.writer.failed.wait()
        why = f"storage failed: {self.writer.failure}"
        log.error("%s; ending live sessions, failing their runs", why)
        for run in self.runs.values():
            if not run.finished:
                run.storage_error = why
                run.cancel.set()
        for session in list(self.live_sessions.values()):
            session.request_end(StopReason.STORAGE_ERROR, why)

    # ------------------------------------------------------------ StartRun
    async def start(
        self,
        sources: list[Source],
        overrides: dict[str, Any],
        *,
        run_id: str = "",
        resume: str = "",
        dry_run: bool = False,
        replay: ReplayRequest | None = None,
    ) -> tuple[RunView | None, list[Classification]]:
        if self.writer.failure is not None:
            raise StorageError(f"the bridge cannot record: {self.writer.failure}")
        identifiers.check("run_id", run_id, allow_empty=True)
        identifiers.check("resume", resume, allow_empty=True)
        identifiers.check_all("options.tags", overrides.get("tags", []))
        if resume:
            return await self._resume(sources, overrides, resume, dry_run)
        if dry_run:
            raise ValueError("dry_run: only meaningful with resume")
        chosen = None
        if replay is not None:
            chosen = await self._read(replay.select, sources, overrides)
            overrides = {**overrides, **replay_options(chosen)}
        settings = RunSettings(**overrides)
        settings.validate()
        if chosen is not None:
            scenarios = chosen.scenarios
        else:
            loaded = await asyncio.to_thread(load_sources, sources)
            scenarios = expand_trials(loaded, settings.repeat)
        check_lines(scenarios, settings.line)
        check_tool_backend(settings, scenarios)
        existing = await self._read(lambda r: r.run_ids())
        if run_id and run_id in existing:
            raise RunConflict(f"run {run_id!r} already exists; resume it or pick a name", True)
        run_id = run_id or new_run_id([*existing, *self.runs])
        check_tiers(settings, self._bots_here(settings), run_id, replay=chosen is not None)
        # Off the loop: building a redactor loads presidio (about a second).
        await asyncio.to_thread(redact_if_asked, self.writer, run_id, settings)
        now = time.time_ns()
        await self.writer.create_run(
            RunRecord(
                run_id,
                now,
                RunStatus.RUNNING,
                self.vae_version,
                settings.to_dict(),
                list(settings.tags),
            )
        )
        if chosen is not None:
            await link_run(self.writer, run_id, chosen.run_id)
        await self.writer.add_run_scenarios(
            [
                RunScenario(run_id, sc.name, i, sc.domain, sc.to_dict())
                for i, sc in enumerate(scenarios)
            ]
        )
        run = RunState(run_id, settings, scenarios, now, self.vae_version, len(scenarios))
        self._launch(run, [Todo(sc) for sc in scenarios])
        return await self.view(run_id), []

    async def _resume(
        self, sources: list[Source], overrides: dict[str, Any], ref: str, dry_run: bool
    ) -> tuple[RunView | None, list[Classification]]:
        if sources:
            raise ScenarioError(
                "<request>", "sources", "a resume re-runs the run's recorded scenarios; give none"
            )
        run_id = await self.resolve(ref)
        live = self.runs.get(run_id)
        if live is not None and not live.finished:
            raise RunConflict(f"run {run_id} is still running in this bridge")
        if self.executor.shared is not None:
            where = await self.executor.shared.running_elsewhere(run_id)
            if where:
                raise RunConflict(
                    f"run {run_id} is still running at the bridge at {where} (it shares runs"
                    " through this database); resume it once it has ended there"
                )

        def load(reader: RecordingReader) -> tuple[Any, ...]:
            record = reader.get_run(run_id)
            assert record is not None
            recorded = RunSettings.from_dict(record.options)
            for name in ("modality", "clock"):
                asked, was = overrides.get(name), getattr(recorded, name)
                if asked is not None and asked != was:
                    # One run, one tier: its sessions stay comparable (start a new run instead).
                    raise ValueError(
                        f"options.{name}: run {run_id} was recorded with {name} {was}; "
                        f"a resume keeps it (start a new run for {name} {asked})"
                    )
            settings = replace(recorded, **overrides)
            decisions = classify_resume(reader, run_id, min_agent_turns=settings.min_agent_turns)
            attempts: dict[str, int] = {}
            for s in reader.sessions(run_id):
                attempts[s.scenario_name] = max(attempts.get(s.scenario_name, 0), s.attempt)
            frozen = {rs.scenario_name: rs.scenario for rs in reader.run_scenarios(run_id)}
            # A kept attempt that failed the run (a bot error) still fails it.
            latest = reader.latest_attempts(run_id)
            kept = [d.scenario_name for d in decisions if d.state is ResumeState.COMPLETED]
            failures = [why for name in kept if (why := kept_failure(latest[name]))]
            return record, settings, decisions, attempts, frozen, failures

        record, settings, decisions, attempts, frozen, failures = await self._read(load)
        settings.validate()
        classes = [
            Classification(d.scenario_name, str(d.state), d.reason, d.session_id or "")
            for d in decisions
        ]
        if dry_run:
            return await self.view(run_id), classes
        check_tiers(settings, self._bots_here(settings), run_id, replay=bool(settings.replay_from))
        scenarios = [
            scenario_from_dict(frozen[d.scenario_name], f"{run_id} (frozen)") for d in decisions
        ]
        check_tool_backend(settings, scenarios)
        todo: list[Todo] = []
        for d, sc in zip(decisions, scenarios, strict=True):
            if d.state is ResumeState.COMPLETED:
                continue
            if d.state is ResumeState.IN_FLIGHT and d.session_id:
                await self.writer.mark_superseded(d.session_id, f"resumed: {d.reason}")
            todo.append(Todo(sc, attempts.get(sc.name, 0) + 1, f"resume: {d.reason}"))
        await self.writer.update_run_status(run_id, str(RunStatus.RUNNING), None)
        run = RunState(
            run_id,
            settings,
            scenarios,
            record.created_ns,
            self.vae_version,
            len(scenarios),
            done=len(scenarios) - len(todo),
            failures=failures,
        )
        self._launch(run, todo)
        return await self.view(run_id), classes

    def _bots_here(self, settings: RunSettings) -> PairingPool:
        """Whose bots a run's tiers are checked against: a run served by every bridge
        sharing runs is not refused for what this bridge's bots lack (none here: no check)."""
        shared = self.executor.shared
        return PairingPool() if shared is not None and shared.takes(settings) else self.pool

    def _launch(self, run: RunState, todo: list[Todo]) -> None:
        self.runs[run.run_id] = run
        work = self.executor.execute(run, todo)
        if self.traces is not None:  # receive the agent's spans, export the run's trace
            work = self.traces.around_run(run.run_id, run.settings, work)
        run.task = asyncio.create_task(work, name=f"run:{run.run_id}")

    # ------------------------------------------------------------ CancelRun, shutdown
    async def cancel(self, ref: str, *, drain: bool = False) -> RunView:
        """Cancel the run; with ``drain``, only stop it starting new scenarios (returns at once)."""
        run_id = await self.resolve(ref)
        run = self.runs.get(run_id)
        if drain:
            if run is not None and not run.finished:
                pacing.drain(run)
            return await self.view(run_id)
        if run is not None and not run.finished:
            run.cancel.set()
            for session in list(self.live_sessions.values()):
                if session.plan.run_id == run_id:
                    session.request_end(StopReason.CANCELLED, "run cancelled")
            if run.task is not None:
                await asyncio.shield(run.task)
        return await self.view(run_id)

    async def shutdown(self) -> None:
        """End live sessions with ``shutdown``; wait for runs to record their end."""
        for run in self.runs.values():
            # A run already being cancelled stays `cancelled`: the user asked first.
            if not run.finished and not run.cancel.is_set():
                run.shutting_down = True
                run.cancel.set()
        for session in list(self.live_sessions.values()):
            session.request_end(StopReason.SHUTDOWN, "the bridge is shutting down")
        tasks = [r.task for r in self.runs.values() if r.task is not None and not r.task.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=self.bridge.final_state_timeout_s + 5)
        self._storage_watch.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._storage_watch
