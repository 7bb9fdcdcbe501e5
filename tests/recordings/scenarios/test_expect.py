"""Scenarios built to fail: the field, the tag that sets it, contradictions, outcomes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vae.recordings.errors import ScenarioError
from vae.recordings.scenarios.expect import expects_failure, outcome, rule_breakers
from vae.recordings.scenarios.lint import load_sources
from vae.recordings.scenarios.model import Scenario
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.recordings.scenarios.schema import scenario_schema
from vae.recordings.scenarios.sources import Source


@pytest.mark.parametrize(
    ("doc", "built"),
    [
        ({"name": "x"}, False),
        ({"name": "x", "tags": ["expect-pass"]}, False),
        ({"name": "x", "tags": ["expect-fail", "wrong-action"]}, True),
        ({"name": "x", "tags": "expect-fail"}, True),  # one string for a list of strings
        ({"name": "x", "expect_fail": True}, True),
        ({"name": "x", "expect_fail": False}, False),
    ],
)
def test_the_tag_sets_the_field(doc: dict[str, Any], built: bool) -> None:
    sc = scenario_from_dict(doc, "s.yaml")
    assert sc.expect_fail is built
    frozen = sc.to_dict()  # what a run freezes, and reads back
    assert frozen["expect_fail"] is built and expects_failure(frozen) is built
    assert scenario_from_dict(frozen).expect_fail is built


def test_a_run_frozen_before_the_field_is_read_by_its_tag() -> None:
    assert expects_failure({"name": "old", "tags": ["expect-fail"]})
    assert not expects_failure({"name": "old", "tags": ["other"]})
    assert not expects_failure(None) and not expects_failure({})


def test_a_python_scenario_with_the_tag_is_built_to_fail(tmp_path: Path) -> None:
    """A `Scenario` made in Python carries `expect_fail=False` and the tag: the tag wins."""
    module = tmp_path / "mine.py"
    module.write_text(
        "from vae.recordings.scenarios.model import Scenario\n"
        "SCENARIOS = [Scenario(name='known_bug', tags=['expect-fail'])]\n"
    )
    (sc,) = load_sources([Source("python_module", str(module))])
    assert sc.expect_fail is True
    assert Scenario(name="plain").expect_fail is False


@pytest.mark.parametrize(
    ("doc", "field", "problem"),
    [
        ({"name": "x", "expect_fail": "yes"}, "expect_fail", "must be true or false"),
        ({"name": "x", "tags": ["expect-fail", "expect-pass"]}, "tags",
         "'expect-pass' contradicts the tag 'expect-fail'"),
        ({"name": "x", "expect_fail": True, "tags": ["expect-pass"]}, "tags",
         "'expect-pass' contradicts expect_fail: true"),
    ],
)  # fmt: skip
def test_a_contradiction_is_refused_naming_the_field(
    doc: dict[str, Any], field: str, problem: str
) -> None:
    with pytest.raises(ScenarioError) as caught:
        scenario_from_dict(doc, "s.yaml")
    assert caught.value.field == field and problem in str(caught.value)


def test_the_schema_describes_the_field() -> None:
    prop = scenario_schema()["$defs"]["Scenario"]["properties"]["expect_fail"]
    assert prop["type"] == "boolean" and prop["default"] is False
    assert "expect-fail" in prop["description"] and "unexpectedly passed" in prop["description"]


def test_outcomes_read_a_verdict_against_the_expectation() -> None:
    table = {(v, b): outcome(v, b) for v in ("passed", "failed", "unscored", "not_applicable")
             for b in (False, True)}  # fmt: skip
    assert table == {
        ("passed", False): "passed", ("passed", True): "xpassed",
        ("failed", False): "failed", ("failed", True): "xfailed",
        ("unscored", False): "unscored", ("unscored", True): "unscored",
        ("not_applicable", False): "not_applicable", ("not_applicable", True): "not_applicable",
    }  # fmt: skip
    pairs = [
        ("a", "passed"),
        ("b", "xfailed"),
        ("c", "failed"),
        ("d", "xpassed"),
        ("e", "unscored"),
    ]
    assert rule_breakers(pairs) == [("c", "failed"), ("d", "xpassed")]
