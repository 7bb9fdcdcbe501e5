"""Every metrics.json field the importer reads is type-checked, never coerced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vae.recordings.importers.nemo.fingerprint import fingerprint
from vae.recordings.importers.nemo.records import check_metrics


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("stop_reason", 42, "expected a string, got int 42"),
        ("clean_exit", "yes", "expected a boolean, got str 'yes'"),
        ("judge_score", "high", "expected a number, got str 'high'"),
        ("judge_score", True, "expected a number, got bool True"),
        ("total_turns", 2.5, "expected an integer, got float 2.5"),
        ("judge_passed", "true", 'expected a boolean or "N/A"'),
        ("nl_assertion_pass_rate", "0.5", 'expected a number or "N/A"'),
        ("turns", {"a": 1}, "expected a list"),
        ("token_usage", [], "expected an object"),
    ],
)
def test_wrong_types_are_listed_and_dropped(key: str, value: Any, expected: str) -> None:
    clean, problems = check_metrics({key: value, "scenario_name": "ok"})
    assert key not in clean and clean["scenario_name"] == "ok"
    assert len(problems) == 1 and f"metrics.json: {key}: {expected}" in problems[0]


def test_right_types_pass_untouched() -> None:
    metrics = {
        "stop_reason": "[EXIT]",
        "clean_exit": True,
        "judge_score": 0.9,
        "judge_passed": "N/A",
        "nl_assertion_pass_rate": 1,
        "total_turns": 4,
        "token_usage": {"agent": {"n_calls": 2, "prompt": 10, "completion": 3}},
        "something_new": object(),
    }
    assert check_metrics(metrics) == (metrics, [])


def test_token_usage_counts_are_checked() -> None:
    clean, problems = check_metrics({"token_usage": {"agent": {"n_calls": "2", "prompt": 5}}})
    assert clean["token_usage"] == {"agent": {"prompt": 5}}
    assert problems == [
        "metrics.json: token_usage.agent.n_calls: expected an integer, got str '2'; ignored"
    ]


def test_fingerprint_follows_content_not_time(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "metrics.json").write_text("{}")
    first = fingerprint(tmp_path)
    (tmp_path / "a" / "metrics.json").touch()
    assert fingerprint(tmp_path) == first
    (tmp_path / "a" / "metrics.json").write_text('{"x": 1}')
    assert fingerprint(tmp_path) != first
    (tmp_path / "link").symlink_to("/dev/zero")  # never followed: hashed by its target text
    assert fingerprint(tmp_path) != first
