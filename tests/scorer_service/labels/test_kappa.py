"""Cohen's κ, its interval and the confusion matrix against values worked out by hand.

Rows are the labels (pass, fail), columns the judge's verdicts (passed, failed).
"""

from __future__ import annotations

import math

import pytest

from vae.scorer_service.labels.kappa import Z95, cohen_kappa


def test_a_fixed_table_matches_the_hand_computation() -> None:
    # n = 50; p11 = .4, p12 = .1, p21 = .2, p22 = .3; rows .5/.5, columns .6/.4
    # p_o = .7, p_e = .5·.6 + .5·.4 = .5, κ = (.7 − .5)/(1 − .5) = .4
    # A = .4·(1 − 1.1·.6)² + .3·(1 − .9·.6)² = .04624 + .06348 = .10972
    # B = .6²·(.1·(.6 + .5)² + .2·(.4 + .5)²) = .36·.283 = .10188
    # C = (.4 − .5·.6)² = .01
    # var = (A + B − C)/(50·.5²) = .2016/12.5 = .016128
    k = cohen_kappa([[20, 5], [10, 15]])
    assert (k.n, k.agreed) == (50, 35)
    assert k.percent == pytest.approx(0.7)
    assert k.kappa == pytest.approx(0.4)
    assert k.se == pytest.approx(math.sqrt(0.016128))
    assert k.ci is not None
    assert k.ci[0] == pytest.approx(0.4 - Z95 * math.sqrt(0.016128))
    assert k.ci[1] == pytest.approx(0.4 + Z95 * math.sqrt(0.016128))
    assert k.ci == pytest.approx((0.1511, 0.6489), abs=1e-4)
    assert k.undefined == ""


def test_perfect_agreement_with_both_classes_is_one_with_a_zero_width_interval() -> None:
    k = cohen_kappa([[3, 0], [0, 2]])
    assert k.kappa == pytest.approx(1.0) and k.ci == pytest.approx((1.0, 1.0))


def test_agreement_below_chance_is_negative_and_the_interval_is_clipped() -> None:
    # p_o = 0, p_e = .5·.5 + .5·.5 = .5: κ = −1
    k = cohen_kappa([[0, 2], [2, 0]])
    assert k.kappa == pytest.approx(-1.0)
    assert k.ci is not None and k.ci[0] >= -1.0


@pytest.mark.parametrize(
    ("table", "why", "percent"),
    [
        ([[0, 0], [0, 0]], "n = 0: nothing decided on both sides", None),
        # All labels pass, the judge varies: κ would be 0 whatever the judge did.
        ([[6, 4], [0, 0]], "all labels are the same class", 0.6),
        ([[6, 0], [4, 0]], "all verdicts are the same class", 0.6),
        # A single class on both sides: perfect agreement, κ would be 0/0.
        ([[7, 0], [0, 0]], "a single class on both sides", 1.0),
        ([[0, 0], [0, 3]], "a single class on both sides", 1.0),
    ],
)
def test_degenerate_tables_leave_kappa_undefined_never_zero_or_one(
    table: list[list[int]], why: str, percent: float | None
) -> None:
    k = cohen_kappa(table)
    assert k.kappa is None and k.ci is None and k.se is None
    assert k.undefined == why
    assert k.percent == (pytest.approx(percent) if percent is not None else None)
    shown = k.as_dict()
    assert shown["kappa"] is None and shown["kappa_undefined"] == why


def test_bad_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="square"):
        cohen_kappa([[1, 2, 3], [4, 5, 6]])
    with pytest.raises(ValueError, match="negative"):
        cohen_kappa([[1, -1], [0, 2]])
