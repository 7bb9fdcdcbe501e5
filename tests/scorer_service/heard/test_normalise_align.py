"""Normalisation, alignment and critical mismatches on a table of cases.

Number words, ordinals, dates, spelled codes, insertions and deletions, and
empty sides: each row says what two phrasings must normalise to, or what a
comparison of what was said with what was heard must find.
"""

from __future__ import annotations

import pytest

from vae.scorer_service.heard.align import align, score_from
from vae.scorer_service.heard.compare import Line, compare, mismatch_text
from vae.scorer_service.heard.critical import text_items, value_items
from vae.scorer_service.heard.normalise import tokens, words

SAME = [
    # number words, ordinals
    ("twenty first", "21st"),
    ("twenty first", "21"),
    ("twenty-one", "21"),
    ("the nineteenth", "the 19th"),
    ("two thousand twenty six", "2026"),
    ("one hundred and five people", "105 people"),
    ("one hundred twenty", "120"),
    # dates
    ("March twentieth", "March 20th"),
    ("on the 14th of March", "on the fourteenth of March"),
    # spelled codes
    ("S J two two three zero", "SJ2230"),
    ("S J 2230", "SJ2230"),
    ("SJ 2230", "sj2230"),
    ("order R-5521", "order R five five two one"),
    # case, punctuation, currency, times
    ("Hello, World!", "hello world"),
    ("It costs $25.50.", "it costs 25.50 dollars"),
    ("at 3:00", "at three"),
    ("at 3:30 p.m.", "at three thirty pm"),
    ("8am", "8 a.m."),
]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_phrasings_normalise_alike(a: str, b: str) -> None:
    assert words(a) == words(b)


DIFFERENT = [
    ("twenty first", "twentieth"),
    ("S J two two three zero", "SJ2203"),
    ("two two", "four"),  # single digits in a row are digits, never a sum
    ("March twentieth", "May twentieth"),
]


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_different_things_stay_different(a: str, b: str) -> None:
    assert words(a) != words(b)


def test_words_that_are_letters_stay_words() -> None:
    assert words("I want a table for 2") == ["i", "want", "a", "table", "for", "2"]
    assert words("A B C") == ["abc"]  # spelled letters beside each other are a code


def test_tokens_keep_the_words_they_came_from() -> None:
    text = "move S J two two three zero to March twentieth"
    found = {t.text: text[t.start : t.end] for t in tokens(text)}
    assert found["sj2230"] == "S J two two three zero"
    assert found["20"] == "twentieth"


WER = [
    # said, heard, (substitutions, deletions, insertions), wer
    ("book a table for two", "book a table for two", (0, 0, 0), 0.0),
    ("book a table for two", "book table for two", (0, 1, 0), 0.2),  # a deletion
    ("book a table for two", "book a big table for two", (0, 0, 1), 0.2),  # an insertion
    ("book a table for two", "book a table for three", (1, 0, 0), 0.2),  # a substitution
    ("on March twentieth", "on March twenty first", (1, 0, 0), 1 / 3),
    ("S J two two three zero", "SJ2230", (0, 0, 0), 0.0),
    ("", "", (0, 0, 0), 0.0),  # both sides empty
    ("hello there", "", (0, 2, 0), 1.0),  # nothing heard
    ("", "hello", (0, 0, 1), 1.0),  # heard what nobody said
]


@pytest.mark.parametrize(("said", "heard", "edits", "wer"), WER)
def test_alignment_counts_each_kind_of_error(
    said: str, heard: str, edits: tuple[int, int, int], wer: float
) -> None:
    a = align(words(said), words(heard))
    assert (a.substitutions, a.deletions, a.insertions) == edits
    assert a.wer == pytest.approx(wer)
    assert 0.0 <= score_from(a.wer) <= 1.0


def test_value_is_one_minus_wer_kept_in_range() -> None:
    assert score_from(0.25) == 0.75
    assert score_from(3.0) == 0.0  # insertions can push WER above 1


CRITICAL = [
    ("March twentieth", [("date", "03-20")]),
    ("the 20th of March", [("date", "03-20")]),
    ("2026-03-20", [("date", "03-20")]),
    ("on Thursday", [("date", "thursday")]),
    ("booking S J two two three zero", [("code", "sj2230")]),
    ("a table for two at eight", [("number", "2"), ("number", "8")]),
    ("It is 25.50 dollars", [("number", "25.5")]),
    ("Sure, Tom Baker, you are booked.", [("name", "tom"), ("name", "baker")]),
    ("Hello there.", []),  # a capital that starts a sentence is not a name
]


@pytest.mark.parametrize(("text", "expected"), CRITICAL)
def test_critical_items(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(i.kind, i.value) for i in text_items(text)] == expected


def test_values_compared_by_a_failing_signal_carry_the_same_items() -> None:
    found = value_items({"booking_id": "SJ2230", "new_date": "2026-03-21", "party": 4})
    assert {(i.kind, i.value) for i in found} == {
        ("code", "sj2230"),
        ("date", "03-21"),
        ("number", "4"),
    }


def test_a_misheard_date_is_a_critical_mismatch_in_the_speakers_words() -> None:
    said = [Line(1.0, "Move S J two two three zero to March twentieth."), Line(4.0, "Bye.")]
    heard = [Line(2.0, "move SJ2230 to March twenty first"), Line(5.0, "bye")]
    result = compare(said, heard)
    assert result.wer == pytest.approx(1 / 6)
    (m,) = result.mismatches
    assert (m.turn, m.kind, m.said, m.heard) == (0, "date", "March twentieth", "March twenty first")
    assert (m.said_value, m.heard_value) == ("03-20", "03-21")
    text = mismatch_text(m.as_dict())
    assert text == 'the agent heard "March twenty first" where the caller said "March twentieth"'
    first = result.turns[0]
    assert ["twentieth", "sub"] in first.said_marks
    assert ["twenty first", "sub"] in first.heard_marks
    assert (first.words, first.errors) == (5, 1)
    assert result.turns[1].errors == 0


def test_one_alignment_for_the_session_forgives_a_recogniser_that_cuts_turns_elsewhere() -> None:
    said = [Line(1.0, "I need to change my flight."), Line(4.0, "It is booking SJ1042.")]
    heard = [Line(5.0, "i need to change my flight it is booking S J one zero four two")]
    result = compare(said, heard)
    assert result.wer == 0.0 and result.mismatches == []
    assert [t.heard for t in result.turns] == [
        "i need to change my flight",
        "it is booking S J one zero four two",
    ]


def test_a_code_not_heard_at_all_is_a_mismatch_and_so_is_an_invented_number() -> None:
    result = compare(
        [Line(0, "It is booking SJ1042, for two.")], [Line(1, "it is booking for three")]
    )
    kinds = {(m.kind, m.said, m.heard) for m in result.mismatches}
    assert ("code", "SJ1042", "") in kinds
    assert ("number", "two", "three") in kinds
    missing = next(m for m in result.mismatches if m.kind == "code")
    assert (
        mismatch_text(missing.as_dict()) == 'the agent did not hear "SJ1042" that the caller said'
    )


def test_empty_sides() -> None:
    nothing = compare([], [])
    assert nothing.wer == 0.0 and nothing.turns == [] and nothing.mismatches == []
    unheard = compare([Line(0, "table for two")], [])
    assert unheard.wer == 1.0
    assert [(m.said, m.heard) for m in unheard.mismatches] == [("two", "")]
    invented = compare([], [Line(0, "table for 2")])
    assert invented.wer == 1.0
    assert [(m.said, m.heard) for m in invented.mismatches] == [("", "2")]
    assert mismatch_text(invented.mismatches[0].as_dict()).endswith("which the caller never said")
