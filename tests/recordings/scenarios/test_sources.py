"""Scenario sources validated up front: files, folders, modules, inline; clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.bridge_service.conftest import scenario
from vae.recordings.errors import ScenarioError
from vae.recordings.scenarios.lint import load_sources
from vae.recordings.scenarios.sources import Source

MODULE = """
from dataclasses import dataclass, field
from vae.recordings.scenarios.model import Scenario

@dataclass
class MyScenario:  # a user's own class with the same fields
    name: str
    domain: str = "mine"
    nl_assertions: list = field(default_factory=lambda: ["be polite"])

SCENARIOS = [Scenario(name="from_class", domain="x"), MyScenario(name="own_class")]
"""


def test_every_source_kind(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    (suite / "nested").mkdir(parents=True)
    (suite / "a.yaml").write_text(yaml.safe_dump(scenario("a")))
    (suite / "nested" / "b.json").write_text(json.dumps([scenario("b"), scenario("c")]))
    (suite / "notes.txt").write_text("ignored")
    module = tmp_path / "my_scenarios.py"
    module.write_text(MODULE)
    got = load_sources(
        [
            Source("path", str(suite)),
            Source("python_module", str(module)),
            Source("inline", yaml.safe_dump(scenario("d"))),
        ]
    )
    assert [s.name for s in got] == ["a", "b", "c", "from_class", "own_class", "d"]
    assert got[4].domain == "mine" and got[4].nl_assertions == ["be polite"]


@pytest.mark.parametrize(
    ("content", "field", "problem"),
    [
        ({"name": "x", "max_duration": "long"}, "max_duration", "must be a number"),
        ({"name": "x", "colour": 1}, "colour", "unknown field"),
        (
            {"name": "x", "noise": {"noise_files": ["missing.wav"]}},
            "noise.noise_files[0]",
            "does not exist",
        ),
        (
            {"name": "x", "sync_hook": "tests.bridge_service.sync_hooks:nope"},
            "sync_hook",
            "has no function 'nope'",
        ),
    ],
)
def test_broken_file_names_path_and_field(
    tmp_path: Path, content: dict[str, object], field: str, problem: str
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(content))
    with pytest.raises(ScenarioError) as exc:
        load_sources([Source("path", str(tmp_path))])
    assert str(path) in str(exc.value) and exc.value.field == field
    assert problem in exc.value.problem


def test_duplicate_names_and_unparsable(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(scenario("same")))
    with pytest.raises(ScenarioError, match="'same' also defined"):
        load_sources(
            [Source("path", str(tmp_path)), Source("inline", json.dumps(scenario("same")))]
        )
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ScenarioError, match="cannot parse"):
        load_sources([Source("path", str(bad))])
