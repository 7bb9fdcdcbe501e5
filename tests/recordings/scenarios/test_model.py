"""Scenario validation: good documents parse; broken ones name the field."""

from __future__ import annotations

from typing import Any

import pytest

from vae.recordings.errors import ScenarioError
from vae.recordings.scenarios.model import SuccessSignal, render_prompt
from vae.recordings.scenarios.parse import scenario_from_dict

GOOD: dict[str, Any] = {
    "name": "change_flight",
    "domain": "airline",
    "max_duration": 60,
    "user": {
        "persona": {"role": "caller", "name": "Ana"},
        "task": {"goal": "Move my flight to Friday"},
        "script": [{"say": "Hi"}],
    },
    "agent": {
        "actions": {"instructions": ["Verify identity"], "guidelines": ["Be brief"]},
        "resources": {"tools": {"change_flight": {"flight_id": "the flight"}}},
    },
    "initial_state": {"flights": [{"id": "F1", "day": "Thursday"}]},
    "reference_answer": {"name": "change_flight", "arguments": {"day": "Friday"}},
    "expected_scenario_db": {"flights": [{"id": "F1", "day": "Friday"}]},
    "nl_assertions": ["The agent confirms the new day"],
    "db_state_assertions": [{"path": "flights.0.day", "op": "eq", "value": "Friday"}],
    "initialization_actions": [{"env_type": "user", "func_name": "turn_on", "arguments": {}}],
    "success_signals": ["db_state_match", "CLEAN_EXIT"],
    "noise": {"white_noise_db": -30},
}


def test_good_scenario_parses_and_round_trips() -> None:
    sc = scenario_from_dict(GOOD, "suite/a.yaml")
    assert sc.user.extras["script"] == [{"say": "Hi"}]
    assert sc.success_signals == [SuccessSignal.DB_STATE_MATCH, SuccessSignal.CLEAN_EXIT]
    assert sc.initialization_actions[0]["side"] == "user"
    assert sc.noise is not None and sc.noise.white_noise_db == -30
    again = scenario_from_dict(sc.to_dict(), "frozen")
    assert again == sc
    prompt = render_prompt(sc.agent)
    assert "1. Verify identity" in prompt and "change_flight" in prompt


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"name": ""}, "name"),
        ({"max_duration": "long"}, "max_duration"),
        ({"reference_answer": "yes"}, "reference_answer"),
        ({"success_signals": ["SPEED"]}, "success_signals[0]"),
        ({"db_state_assertions": [{"path": "x"}]}, "db_state_assertions[0]"),
        ({"initialization_actions": [{"side": "both", "func_name": "f"}]},
         "initialization_actions[0].side"),
        ({"colour": "red"}, "colour"),
        ({"sync_hook": "no_colon"}, "sync_hook"),
        ({"user": {"persona": {"age": 3}}}, "user.persona.age"),
        ({"noise": {"white_noise_db": "loud"}}, "noise.white_noise_db"),
    ],
)  # fmt: skip
def test_broken_scenario_names_source_and_field(patch: dict[str, Any], field: str) -> None:
    with pytest.raises(ScenarioError) as info:
        scenario_from_dict({**GOOD, **patch}, "suite/a.yaml")
    assert info.value.field == field
    assert str(info.value).startswith("suite/a.yaml")


def test_not_a_mapping() -> None:
    with pytest.raises(ScenarioError, match="expected a mapping"):
        scenario_from_dict(["x"], "s.json")
