"""A replay request at the service edge: StartRun's replay fields, checked and resolved.

Kept beside the replay package so the run manager and the servicer each gain
one line: the request is validated here (no scenario sources, no user
connector — the bridge plays the user side itself) and resolved against the
store by :func:`~vae.bridge_service.replay.source.select_replay`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vae.bridge_service.replay.source import ReplaySelection, select_replay
from vae.recordings.errors import ScenarioError
from vae.recordings.read.reader import RecordingReader
from vae.recordings.scenarios.sources import Source


@dataclass(frozen=True)
class ReplayRequest:
    run: str
    scenarios: tuple[str, ...] = ()
    sessions: tuple[str, ...] = ()

    def select(
        self, reader: RecordingReader, sources: list[Source], overrides: dict[str, Any]
    ) -> ReplaySelection:
        if sources:
            raise ScenarioError(
                "<request>",
                "sources",
                "a replay reuses the source run's frozen scenarios; give none",
            )
        if overrides.get("user_connector") is not None:
            raise ValueError(
                "options.user_connector: a replay plays the user side itself; give none"
            )
        return select_replay(reader, self.run, self.scenarios, self.sessions)


def replay_options(chosen: ReplaySelection) -> dict[str, Any]:
    """The run options that make the executor replay ``chosen`` (kept for a resume)."""
    return {"replay_from": chosen.run_id, "replay_sources": dict(chosen.sources)}
