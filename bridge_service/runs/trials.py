"""``RunOptions.repeat``: expand a run's scenarios into K independent trials.

Each trial is frozen in the run as its own scenario named ``<name>#<k>``
(:mod:`vae.recordings.trials`), so attempts, retries, resume and rescoring treat
trials like any scenario, and each trial's seed (run seed x trial name, sent
to the bots in ``SessionStart.seed`` and used for noise) differs.
"""

from __future__ import annotations

from dataclasses import replace

from vae.recordings.errors import ScenarioError
from vae.recordings.scenarios.model import Scenario
from vae.recordings.trials import split_trial, trial_name


def expand_trials(scenarios: list[Scenario], repeat: int) -> list[Scenario]:
    """``repeat`` copies of each scenario, trial-major (every scenario's trial 1 first)."""
    if repeat <= 1:
        return scenarios
    for sc in scenarios:
        if split_trial(sc.name)[1] is not None:
            raise ScenarioError(
                sc.name, "name", "ends in '#<number>', which names repeated trials; rename it"
            )
    return [
        replace(sc, name=trial_name(sc.name, k)) for k in range(1, repeat + 1) for sc in scenarios
    ]
