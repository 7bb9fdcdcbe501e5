"""The identifier grammar and the output-path guard."""

from __future__ import annotations

from pathlib import Path

import pytest

from vae.recordings import identifiers
from vae.recordings.errors import ScenarioError
from vae.recordings.read.selection import resolve_run
from vae.recordings.scenarios.parse import scenario_from_dict


@pytest.mark.parametrize(
    "value",
    ["2024-06-01T10-22-33", "a", "_x", "run.v2", "A-b_c.9", "x" * identifiers.MAX_ID],
)
def test_valid(value: str) -> None:
    assert identifiers.check("run_id", value) == value


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("../evil-x", "not a valid identifier"),
        ("a b", "not a valid identifier"),
        ("ünï", "not a valid identifier"),
        ("x" * (identifiers.MAX_ID + 1), "at most 128"),
        (".hidden", "not a valid identifier"),
        ("-rf", "not a valid identifier"),
        ("a/b", "not a valid identifier"),
        ("a\\b", "not a valid identifier"),
        ("a\nb", "not a valid identifier"),
        ("", "must not be empty"),
    ],
)
def test_invalid(value: str, needle: str) -> None:
    with pytest.raises(identifiers.InvalidIdentifier, match="run_id") as info:
        identifiers.check("run_id", value)
    assert needle in str(info.value)


def test_slug_is_always_valid() -> None:
    for text in ["../../etc", "a b c", "ünï", "...", "-x-", "x" * 500]:
        assert identifiers.is_valid(identifiers.slug(text))


def test_contained_refuses_escapes(tmp_path: Path) -> None:
    assert identifiers.contained(tmp_path, "a.json") == (tmp_path / "a.json").resolve()
    for bad in ["../x", "/etc/passwd", "a/../../x"]:
        with pytest.raises(identifiers.OutsideTarget):
            identifiers.contained(tmp_path, bad)
    (tmp_path / "link").symlink_to(tmp_path.parent)
    with pytest.raises(identifiers.OutsideTarget):
        identifiers.contained(tmp_path, "link", "x")


def test_scenario_names_and_tags_follow_the_grammar() -> None:
    with pytest.raises(ScenarioError, match="name"):
        scenario_from_dict({"name": "../up"})
    with pytest.raises(ScenarioError, match=r"tags\[1\]"):
        scenario_from_dict({"name": "ok", "tags": ["fine", "not fine"]})


def test_run_references_follow_the_grammar_but_legacy_exact_ids_resolve() -> None:
    assert resolve_run(["../legacy"], "../legacy") == "../legacy"
    with pytest.raises(identifiers.InvalidIdentifier):
        resolve_run(["2024-06-01"], "../x")
