"""Overrides replace a scenario's assertions, or add to them with ``add_*`` (an explicit choice)."""

from __future__ import annotations

import pytest

from vae.recordings.errors import ScenarioError
from vae.recordings.scenarios.model import Scenario
from vae.scorer_service.config import ConfigError, ScoringConfig, validate_overrides
from vae.scorer_service.overrides import effective_scenario

DOC = {
    "name": "book",
    "nl_assertions": ['The agent says "booked".'],
    "db_state_assertions": [{"path": "a", "op": "eq", "value": 1}],
}


def _scenario(overrides: dict[str, dict[str, object]]) -> Scenario:
    return effective_scenario(DOC, ScoringConfig(overrides=overrides), "test")


def test_plain_key_replaces_and_add_key_appends() -> None:
    replaced = _scenario({"book": {"nl_assertions": ['The agent says "bye".']}})
    assert replaced.nl_assertions == ['The agent says "bye".']
    added = _scenario(
        {
            "*": {"add_nl_assertions": ['The agent says "hello".']},
            "book": {"add_db_state_assertions": [{"path": "b", "op": "exists"}]},
        }
    )
    assert added.nl_assertions == [
        'The agent says "booked".',
        'The agent says "hello".',
    ]
    assert [a["path"] for a in added.db_state_assertions] == ["a", "b"]


def test_replace_then_add_in_order_and_added_items_are_validated() -> None:
    both = _scenario({"*": {"nl_assertions": []}, "book": {"add_nl_assertions": ["x"]}})
    assert both.nl_assertions == ["x"]
    with pytest.raises(ScenarioError) as info:
        _scenario({"book": {"add_db_state_assertions": [{"path": "b", "op": "equals"}]}})
    assert info.value.field == "db_state_assertions[1].op"


def test_unknown_override_key_lists_the_add_keys() -> None:
    with pytest.raises(ConfigError, match="add_nl_assertions"):
        validate_overrides({"*": {"append_nl_assertions": ["x"]}}, "o.yaml")
