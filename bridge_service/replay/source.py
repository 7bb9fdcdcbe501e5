"""What a replay plays: the source run's scenarios and sessions, and the replayed side.

``vae run --replay RUN`` (``StartRunRequest.replay``) names a recorded run by
id or unique prefix; ``replay_scenarios`` and ``replay_sessions`` narrow it to
some of its scenarios or to given attempts. Each chosen scenario is replayed
from one session — the named attempt, else the scenario's latest attempt that
was not superseded — with the scenario exactly as the source run froze it
(prompt, tools, initial state, assertions).

An attempt that was cut off (a stop reason in
``vae.recordings.stop_reasons.UNFINISHED``: cancelled, shutdown, a failed
connector, ...) or is still running is never replayed: its caller did not get
to say everything, so a replay of it would end ``replay_finished`` — a finished
attempt — on a conversation that never finished. Named in ``replay_sessions``
or ``replay_scenarios`` it is refused; otherwise its scenario is left out, and
a run with no replayable attempt is refused with the cut-off ones listed.
Imported attempts whose ending is unknown (``unspecified``) stay replayable.

The choice is recorded with the new run's options (``replay_from``,
``replay_sources``), so a resume replays the same sessions, and as
``replayed_from`` on the run and each session (``vae.recordings.read.replay_links``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from vae.bridge_service.config import RunSettings
from vae.bridge_service.connectors.base import ConnectorError
from vae.bridge_service.replay.endpoint import ReplayEndpoint
from vae.bridge_service.session.plan import SessionPlan
from vae.recordings import stop_reasons
from vae.recordings.backends.locator import StoreRef
from vae.recordings.errors import ScenarioError
from vae.recordings.models import SessionRecord, SessionStatus
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.replay_links import link_session
from vae.recordings.read.replay_script import ReplayError, load_script
from vae.recordings.read.selection import select_run
from vae.recordings.scenarios.model import Scenario
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.recordings.write.writer import RecordingWriter

log = logging.getLogger("vae.bridge.replay")


@dataclass(frozen=True)
class ReplaySelection:
    run_id: str
    scenarios: list[Scenario]
    #: Scenario name -> the source session whose caller is replayed.
    sources: dict[str, str]


def _cut_off(s: SessionRecord) -> str:
    """Why ``s`` cannot be replayed ("" when it can): cut off, or still running."""
    reason = stop_reasons.normalise(s.stop_reason)
    if s.status is SessionStatus.RUNNING or not reason:
        return "still running"
    if reason in stop_reasons.UNFINISHED:
        return f"cut off ({reason})"
    return ""


def select_replay(
    reader: RecordingReader,
    ref: str,
    scenario_names: Sequence[str] = (),
    session_ids: Sequence[str] = (),
) -> ReplaySelection:
    """Resolve a replay request; raise ScenarioError naming the field that is wrong."""
    run_id = select_run(reader, ref)
    frozen = {rs.scenario_name: rs.scenario for rs in reader.run_scenarios(run_id)}
    sources: dict[str, str] = {}
    for sid in session_ids:
        s = reader.session(sid)
        if s is None or s.run_id != run_id:
            raise ScenarioError(
                "<request>", "replay_sessions", f"run {run_id} has no session {sid!r}"
            )
        if s.scenario_name in sources:
            raise ScenarioError(
                "<request>",
                "replay_sessions",
                f"two sessions of scenario {s.scenario_name!r}: replay one attempt per scenario",
            )
        if why := _cut_off(s):
            raise ScenarioError(
                "<request>",
                "replay_sessions",
                f"session {sid!r} was {why}: only a finished attempt can be replayed",
            )
        sources[s.scenario_name] = sid
    latest = reader.latest_attempts(run_id)
    unknown = sorted(set(scenario_names) - set(frozen))
    if unknown:
        raise ScenarioError(
            "<request>",
            "replay_scenarios",
            f"run {run_id} has no scenario {unknown[0]!r} (it has: {', '.join(sorted(frozen))})",
        )
    wanted = list(scenario_names) or ([] if session_ids else list(frozen))
    skipped: list[str] = []
    for name in wanted:
        if name in sources:
            continue
        if name not in latest:
            if scenario_names:
                raise ScenarioError(
                    "<request>", "replay_scenarios", f"scenario {name!r} was never recorded"
                )
            continue
        if why := _cut_off(latest[name]):
            if scenario_names:
                raise ScenarioError(
                    "<request>",
                    "replay_scenarios",
                    f"scenario {name!r}: its latest attempt {latest[name].session_id!r}"
                    f" was {why}; only a finished attempt can be replayed",
                )
            skipped.append(f"{name} ({why})")
            continue
        sources[name] = latest[name].session_id
    if not sources:
        detail = f"; not replayable: {', '.join(skipped)}" if skipped else ""
        raise ScenarioError(
            "<request>", "replay", f"run {run_id} has no finished session to replay{detail}"
        )
    if skipped:
        log.warning("replay of run %s leaves out %s", run_id, ", ".join(skipped))
    order = [name for name in frozen if name in sources]
    scenarios = [scenario_from_dict(frozen[n], f"{run_id} (frozen)") for n in order]
    return ReplaySelection(run_id, scenarios, {n: sources[n] for n in order})


async def open_replay(
    settings: RunSettings, plan: SessionPlan, db_path: StoreRef
) -> ReplayEndpoint | None:
    """The replayed user side of one attempt, or None when the run is not a replay."""
    if not settings.replay_from:
        return None
    source = settings.replay_sources.get(plan.scenario.name)
    if source is None:
        raise ConnectorError(f"replay: no source session for scenario {plan.scenario.name!r}")
    gate = settings.replay_gate_silence_s

    def load() -> ReplayEndpoint:
        with RecordingReader(db_path) as reader:
            return ReplayEndpoint(load_script(reader, source, gate_silence_s=gate), gate)

    try:
        return await asyncio.to_thread(load)
    except ReplayError as exc:
        raise ConnectorError(f"replay: {exc}") from exc


async def record_link(writer: RecordingWriter, session_id: str, endpoint: object) -> None:
    if isinstance(endpoint, ReplayEndpoint):
        await link_session(writer, session_id, endpoint.script.session_id)
