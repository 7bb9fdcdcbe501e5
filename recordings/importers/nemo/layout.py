"""Finding the scenarios and attempts in a results directory.

Layout (``eval_<ts>/``): one directory per scenario, named after it; a resume
moves an unfinished one aside as ``<name>.killed.<ts>/`` (newer runners also
``<name>.killed.autoretry<N>.<ts>/``) with an empty ``__KILLED__`` marker, and
re-runs the scenario in a fresh ``<name>/``. Each directory becomes one attempt
of its scenario: the moved-aside ones first (in the order they were moved),
the live one last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from vae.recordings import identifiers
from vae.recordings.errors import StoreError

#: Files whose presence marks a directory as a scenario directory.
SCENARIO_MARKERS = (
    "metrics.json",
    "conversation_log.txt",
    "conversation_log.wav",
    "final_agent_response.json",
    "scenario_config",
    "__KILLED__",
)

_KILLED = re.compile(r"^(?P<name>.+?)\.killed\.(?:autoretry(?P<retry>\d+)\.)?(?P<ts>.+)$")
_RUN_TS = re.compile(r"(\d{8})_(\d{6})")


@dataclass(frozen=True)
class AttemptDir:
    path: Path
    killed: bool
    #: Sort key among a scenario's attempts.
    order: tuple[int, str, int]


@dataclass
class ScenarioDirs:
    name: str
    attempts: list[AttemptDir] = field(default_factory=list)

    @property
    def live(self) -> AttemptDir | None:
        live = [a for a in self.attempts if not a.killed]
        return live[0] if live else None


def is_scenario_dir(path: Path) -> bool:
    return path.is_dir() and any((path / marker).exists() for marker in SCENARIO_MARKERS)


def scan(results_dir: Path) -> list[ScenarioDirs]:
    """The scenarios under ``results_dir``, each with its attempts in order."""
    found: dict[str, ScenarioDirs] = {}
    for child in sorted(results_dir.iterdir()):
        if child.is_symlink() or not is_scenario_dir(child):
            continue  # a symlinked directory is never followed (listed by the importer)
        m = _KILLED.match(child.name)
        if m:
            name = m["name"]
            attempt = AttemptDir(child, True, (0, m["ts"], int(m["retry"] or 0)))
        else:
            name = child.name
            attempt = AttemptDir(child, (child / "__KILLED__").exists(), (1, "", 0))
        # Directory names become scenario names and file names: keep to the grammar.
        name = name if identifiers.is_valid(name) else identifiers.slug(name, "scenario")
        found.setdefault(name, ScenarioDirs(name)).attempts.append(attempt)
    for dirs in found.values():
        dirs.attempts.sort(key=lambda a: a.order)
    return [found[name] for name in sorted(found)]


def run_id_from_dir(results_dir: Path) -> str:
    """``eval_20240601_102233`` -> ``2024-06-01T10-22-33`` (vae's readable ids)."""
    m = _RUN_TS.search(results_dir.name)
    if m:
        try:
            when = datetime.strptime(m[1] + m[2], "%Y%m%d%H%M%S")
        except ValueError:
            pass
        else:
            return when.strftime("%Y-%m-%dT%H-%M-%S")
    return identifiers.slug(results_dir.name, "imported")


class ImportSourceError(StoreError):
    """The directory cannot be imported at all (not a results directory, run id taken)."""


class RunIdTakenError(ImportSourceError):
    """The requested run id names a run the database already has."""


def choose_run_id(requested: str | None, derived: str, existing: list[str]) -> str:
    if requested:
        identifiers.check("run_id", requested)
        if requested in existing:
            raise RunIdTakenError(f"run id {requested!r} already exists in this database")
        return requested
    if derived not in existing:
        return derived
    n = 2
    while f"{derived}-{n}" in existing:
        n += 1
    return f"{derived}-{n}"


def session_id_for(run_id: str, scenario_name: str, attempt: int) -> str:
    """The bridge's spelling (``<run>_<scenario slug>_a<attempt>``): safe in file names."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", scenario_name).strip("-") or "scenario"
    return f"{run_id}_{slug}_a{attempt}"
