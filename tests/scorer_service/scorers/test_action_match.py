"""ACTION_MATCH semantics, table-driven (seed-system.md §3, with its bugs fixed)."""

from __future__ import annotations

from typing import Any

import pytest

from vae.recordings.models import Verdict
from vae.scorer_service.scorers.action_match import MatchOptions, match_actions, normalise_text

P, F, NA = Verdict.PASSED, Verdict.FAILED, Verdict.NOT_APPLICABLE
CAPS = MatchOptions(ignore_capitalization=True)
PUNCT = MatchOptions(ignore_punctuation=True)
CLEAN = MatchOptions(clean_text=True)
ALL = MatchOptions(ignore_capitalization=True, ignore_punctuation=True, clean_text=True)
STRICT = MatchOptions(strict=True)
PLAIN = MatchOptions()

CASES: list[tuple[str, Any, Any, MatchOptions, Verdict]] = [
    ("no reference", None, [{"a": 1}], PLAIN, NA),
    ("empty reference", [], [{"a": 1}], PLAIN, NA),
    ("no prediction", {"a": 1}, [], PLAIN, F),
    ("prediction None", {"a": 1}, None, PLAIN, F),
    ("dict subset passes", {"a": 1}, {"a": 1, "b": 2}, PLAIN, P),
    ("dict missing key", {"a": 1, "c": 3}, {"a": 1, "b": 2}, PLAIN, F),
    ("dict wrong value", {"a": 1}, {"a": 2}, PLAIN, F),
    ("one-item list unwrapped", [{"a": 1}], [{"a": 1, "side": "agent"}], PLAIN, P),
    ("dict ref matches last of list", {"a": 2}, [{"a": 1}, {"a": 2}], PLAIN, P),
    ("dict ref ignores earlier items", {"a": 1}, [{"a": 1}, {"a": 2}], PLAIN, F),
    ("dict ref vs list under strict", {"a": 2}, [{"a": 1}, {"a": 2}], STRICT, F),
    ("list order independent", [{"a": 1}, {"a": 2}], [{"a": 2}, {"a": 1}], PLAIN, P),
    ("list one-to-one (no reuse)", [{"a": 1}, {"a": 1}], [{"a": 1}, {"a": 2}], PLAIN, F),
    ("unwrapped ref vs list uses last item", [{"a": 1}], [{"a": 1}, {"a": 9}], PLAIN, F),
    (
        "list extra items allowed (2)",
        [{"a": 1}, {"b": 1}],
        [{"b": 1}, {"a": 1}, {"c": 1}],
        PLAIN,
        P,
    ),
    (
        "list extra items refused strict",
        [{"a": 1}, {"b": 1}],
        [{"b": 1}, {"a": 1}, {"c": 1}],
        STRICT,
        F,
    ),
    ("list equal length strict", [{"a": 1}, {"b": 1}], [{"b": 1}, {"a": 1}], STRICT, P),
    # greedy matching would pair ref0 with pred0 and then fail ref1; a real matching passes
    (
        "maximum matching beats greedy",
        [{"a": 1}, {"a": 1, "b": 2}],
        [{"a": 1, "b": 2}, {"a": 1}],
        PLAIN,
        P,
    ),
    ("list ref vs dict prediction", [{"a": 1}, {"b": 2}], {"a": 1, "b": 2}, PLAIN, F),
    ("numbers with tolerance", {"x": 1.0}, {"x": 1.000001}, PLAIN, P),
    ("numbers outside tolerance", {"x": 1.0}, {"x": 1.01}, PLAIN, F),
    ("int vs float", {"x": 2}, {"x": 2.0}, PLAIN, P),
    ("numeric string vs number", {"x": 4}, {"x": "4"}, PLAIN, P),
    ("bool is not a number", {"x": True}, {"x": 1}, PLAIN, F),
    ("capitalization exact by default", {"n": "Ann"}, {"n": "ann"}, PLAIN, F),
    ("ignore_capitalization", {"n": "Ann"}, {"n": "ANN"}, CAPS, P),
    ("ignore_punctuation", {"n": "Ann-Marie!"}, {"n": "AnnMarie"}, PUNCT, P),
    ("punctuation exact by default", {"n": "Ann."}, {"n": "Ann"}, PLAIN, F),
    ("clean_text whitespace", {"n": "  Ann   Lee "}, {"n": "Ann Lee"}, CLEAN, P),
    ("clean_text unicode NFKC", {"n": "ﬁsh"}, {"n": "fish"}, CLEAN, P),
    ("clean_text does not lowercase", {"n": "Ann"}, {"n": "ann"}, CLEAN, F),
    ("all options together", {"n": " Dr.  ANN "}, {"n": "dr ann"}, ALL, P),
    ("nested dict subset", {"o": {"a": 1}}, {"o": {"a": 1, "b": 2}}, PLAIN, P),
    ("nested list order independent", {"items": ["x", "y"]}, {"items": ["y", "x"]}, PLAIN, P),
    ("null vs null", {"a": None}, {"a": None}, PLAIN, P),
    ("null vs value", {"a": None}, {"a": 0}, PLAIN, F),
]


@pytest.mark.parametrize(
    ("reference", "prediction", "opts", "expected"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_action_match(
    reference: Any, prediction: Any, opts: MatchOptions, expected: Verdict
) -> None:
    verdict, reason = match_actions(reference, prediction, opts)
    assert verdict is expected, reason
    assert reason


def test_clean_text_really_cleans() -> None:
    # the established _clean_label only lowercased; vae normalises whitespace and unicode
    assert normalise_text("\u00a0Caf\u0065\u0301\t  au lait ", CLEAN) == "Café au lait"
