"""The scenario a scoring scores against: the one frozen with the run, with its overrides.

A scoring may override scenario fields (``ScoringConfig.overrides``): the
``"*"`` entry first, then the scenario's own entry. The result is
re-validated, so a bad override fails with the field it broke before anything
is written. Apart from :mod:`vae.scorer_service.context` because it changes
with the override rules, not with what scorers see.
"""

from __future__ import annotations

import copy
from typing import Any

from vae.recordings.scenarios.model import Scenario
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.scorer_service.config import ScoringConfig


def apply_overrides(doc: dict[str, Any], config: ScoringConfig) -> dict[str, Any]:
    """The scenario document with ``"*"`` and then its own overrides applied.

    A key replaces the scenario's value; ``add_nl_assertions`` and
    ``add_db_state_assertions`` append to the list as it stands at that point.
    """
    out = copy.deepcopy(doc)
    for key in ("*", str(doc.get("name", ""))):
        for name, value in copy.deepcopy(config.overrides.get(key, {})).items():
            if name.startswith("add_"):
                target = name.removeprefix("add_")
                current = out.get(target) or []
                added = value if isinstance(value, list) else [value]
                out[target] = [*([current] if isinstance(current, str) else current), *added]
            else:
                out[name] = value
    return out


def effective_scenario(doc: dict[str, Any], config: ScoringConfig, source: str) -> Scenario:
    """Validate the overridden document (raises ScenarioError naming the field)."""
    return scenario_from_dict(apply_overrides(doc, config), source)
