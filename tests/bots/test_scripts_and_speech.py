"""Script validation, the synthesisers, and the example suite's scripts."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import yaml

from vae.bots.brains.scripted import ScriptError, parse_script
from vae.bots.sound.listening import rms_dbfs
from vae.bots.sound.speech import BuzzSynthesiser, default_synthesiser
from vae.recordings.scenarios.parse import scenario_from_dict

SUITE = Path(__file__).resolve().parents[2] / "examples" / "suite"


def test_a_valid_script_parses_with_defaults() -> None:
    script = parse_script(
        {"script": ["Hello.", {"say": "Bye.", "end": True, "wait_s": 0.5}]}, "agent"
    )
    assert script.speaks_first is True
    assert [i.say for i in script.items] == ["Hello.", "Bye."]
    assert script.items[1].end and script.items[1].wait_s == 0.5
    assert parse_script({}, "user").speaks_first is False


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"script": "hello"}, "script"),
        ({"script": [{"say": 3}]}, "script[0].say"),
        ({"script": [{"sayy": "x"}]}, "script[0].sayy"),
        ({"script": [{"tool_calls": [{"arguments": {}}]}]}, "script[0].tool_calls[0]"),
        ({"script": [{"tool_calls": [{"name": "t", "arguments": []}]}]},
         "script[0].tool_calls[0].arguments"),
        ({"script": [{"barge_in_after_s": -1}]}, "script[0].barge_in_after_s"),
        ({"tool_effects": {"t": {"op": "set"}}}, "tool_effects"),
    ],
)  # fmt: skip
def test_a_broken_script_names_the_field(config: dict[str, object], field: str) -> None:
    with pytest.raises(ScriptError) as err:
        parse_script(config, "agent")
    assert err.value.field == field


def test_buzz_is_deterministic_voiced_and_follows_the_text_length() -> None:
    synth = BuzzSynthesiser()
    short, long = synth.synthesise("Hello there."), synth.synthesise("Hello there. " * 4)
    assert np.array_equal(short, synth.synthesise("Hello there."))
    assert len(long) > 3 * len(short)
    assert rms_dbfs(short) > -30


def test_espeak_speaks_when_installed() -> None:
    try:
        synth = default_synthesiser("espeak")
    except OSError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"eSpeak NG missing in CI: {exc}")
        pytest.skip(str(exc))
    a = synth.synthesise("One two three.")
    b = synth.synthesise("One two three, four five six seven eight nine ten.")
    assert synth.sample_rate > 8000
    assert 0.5 < len(a) / synth.sample_rate < 3.0
    assert len(b) > 1.8 * len(a)
    assert rms_dbfs(a) > -35


def test_the_example_suite_is_valid_and_covers_what_the_demo_promises() -> None:
    files = sorted(SUITE.glob("*.yaml"))
    scenarios = [scenario_from_dict(yaml.safe_load(f.read_text()), str(f)) for f in files]
    for sc in scenarios:
        for role in ("user", "agent"):
            parse_script(sc.side(role).extras, role)
    assert len(scenarios) >= 10
    assert len({sc.domain for sc in scenarios}) >= 3
    signals = {str(s) for sc in scenarios for s in sc.success_signals}
    assert signals == {"ACTION_MATCH", "DB_STATE_MATCH", "DB_STATE_ASSERTION", "NL_ASSERTION",
                       "JUDGE_PASSED", "CLEAN_EXIT", "DTMF_RECEIVED"}  # fmt: skip
    assert any(sc.noise is not None for sc in scenarios)
    assert any(
        item.get("barge_in_after_s") is not None
        for sc in scenarios
        for item in sc.user.extras.get("script", [])
        if isinstance(item, dict)
    )
    tags = {t for sc in scenarios for t in sc.tags}
    assert {"wrong-action", "db-mismatch", "no-clean-exit", "stalled"} <= tags
    assert all(sc.initial_state for sc in scenarios if sc.expected_scenario_db)
