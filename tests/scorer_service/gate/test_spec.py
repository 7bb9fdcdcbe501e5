"""The gate's threshold grammar: every bad threshold is a usage error naming the option."""

from __future__ import annotations

import pytest

from vae.scorer_service.gate.spec import GateSpec, GateSpecError, parse_pass_k, parse_rate


@pytest.mark.parametrize(("text", "rate"), [("0.8", 0.8), ("80%", 0.8), ("1", 1.0),
                                            (".5", 0.5), ("100%", 1.0), ("0", 0.0)])  # fmt: skip
def test_rates_as_fractions_or_percentages(text: str, rate: float) -> None:
    assert parse_rate(text, "--min-success") == pytest.approx(rate)


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"min_success": ["1.5"]}, "above 1 (a rate is 0..1; for a percentage write 1.5%)"),
        ({"min_success": ["150%"]}, "above 100%"),
        ({"min_success": ["abc"]}, "'abc' is not a rate"),
        ({"min_success": ["-0.1"]}, "is not a rate"),
        ({"min_success": ["0.5", "0.6"]}, "the overall rate is given twice"),
        ({"min_success": ["airline="]}, "is not DOMAIN=RATE"),
        ({"min_success": ["=0.5"]}, "is not DOMAIN=RATE"),
        ({"min_success": ["airline=0.5", "airline=0.6"]}, "domain 'airline' is given twice"),
        ({"pass_k": ["0=0.5"]}, "K must be a whole number >= 1"),
        ({"pass_k": ["x=0.5"]}, "K must be a whole number >= 1"),
        ({"pass_k": ["3"]}, "is not K=RATE"),
        ({"pass_k": ["3=0.5", "3=0.6"]}, "k=3 is given twice"),
        ({"max_regressions": 1}, "--max-regressions needs --baseline RUN"),
        ({"max_unscored": -1}, "--max-unscored must be >= 0"),
    ],
)
def test_bad_thresholds_are_refused(kwargs: dict[str, object], says: str) -> None:
    with pytest.raises(GateSpecError) as caught:
        GateSpec.from_options(**kwargs)  # type: ignore[arg-type]
    assert says in str(caught.value)


def test_a_spec_of_every_kind() -> None:
    spec = GateSpec.from_options(
        min_success=["75%", "airline=0.9", "retail = 50%"],
        baseline="v1",
        max_unscored=2,
        pass_k=["3=0.6", "1=0.8"],
    )
    assert spec.min_success == 0.75
    assert spec.min_success_domains == {"airline": 0.9, "retail": 0.5}
    assert (spec.baseline, spec.regressions_allowed, spec.max_unscored) == ("v1", 0, 2)
    assert spec.pass_k == {3: 0.6, 1: 0.8} == parse_pass_k(["3=60%", "1=0.8"])
    assert GateSpec().max_unscored == 0  # unscored sessions are not tolerated by default
