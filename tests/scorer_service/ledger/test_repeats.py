"""pass^k and pass@k as τ²-bench defines them."""

from __future__ import annotations

import math

import pytest

from vae.recordings.models import Verdict
from vae.recordings.trials import split_trial, trial_name
from vae.scorer_service.ledger.repeats import (
    averaged,
    group_trials,
    pass_at,
    pass_hat,
    repeats_summary,
)

P, F, U = Verdict.PASSED, Verdict.FAILED, Verdict.UNSCORED


def test_the_definitions() -> None:
    assert pass_hat(4, 2, 2) == pytest.approx(math.comb(2, 2) / math.comb(4, 2))  # 1/6
    assert pass_at(4, 2, 2) == pytest.approx(1 - math.comb(2, 2) / math.comb(4, 2))  # 5/6
    assert pass_hat(3, 3, 3) == 1.0 and pass_at(3, 0, 3) == 0.0
    assert pass_at(3, 1, 3) == 1.0 and pass_hat(3, 2, 3) == 0.0


def test_trial_names_round_trip() -> None:
    assert split_trial(trial_name("book a table", 3)) == ("book a table", 3)
    assert split_trial("plain") == ("plain", None)
    assert split_trial("#1") == ("#1", None)


def test_grouping_averages_and_leaves_undecided_trials_out() -> None:
    rows = [("s1", "a#1", "d", P), ("s2", "a#2", "d", F), ("s3", "a#3", "d", U),
            ("s4", "b#1", "e", P), ("s5", "b#2", "e", P), ("s6", "once", "e", F)]  # fmt: skip
    trials = group_trials(rows)
    assert (trials["a"].n, trials["a"].passed, trials["a"].undecided) == (2, 1, 1)
    got = averaged(trials.values())
    # a: n=2 c=1 -> pass^1 .5, pass^2 0, pass@2 1 ; b: all 1 ; "once" is not repeated
    assert got["pass_hat_k"] == {"1": pytest.approx(0.75), "2": pytest.approx(0.5)}
    assert got["pass_at_k"] == {"1": pytest.approx(0.75), "2": pytest.approx(1.0)}
    summary = repeats_summary(trials)
    assert summary["domains"]["d"]["pass_hat_k"]["2"] == 0.0
    assert summary["scenarios"]["a"]["undecided"] == 1
    assert "once" not in summary["scenarios"]
