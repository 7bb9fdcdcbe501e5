"""What an import did, per scenario and attempt: the CLI prints it, ``--json`` emits it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class AttemptReport:
    directory: str
    session_id: str
    attempt: int
    status: str
    problems: list[str] = field(default_factory=list)


@dataclass
class ScenarioReport:
    name: str
    problems: list[str] = field(default_factory=list)
    attempts: list[AttemptReport] = field(default_factory=list)

    @property
    def problem_count(self) -> int:
        return len(self.problems) + sum(len(a.problems) for a in self.attempts)


@dataclass
class ImportReport:
    run_id: str
    source_dir: str
    scoring_id: str | None = None
    problems: list[str] = field(default_factory=list)
    scenarios: list[ScenarioReport] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
