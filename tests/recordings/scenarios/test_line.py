"""The line's fields: ranges, the run option's text, merging, the short description."""

from __future__ import annotations

import pytest

from vae.recordings.scenarios.line import (
    LineConditions,
    describe,
    describe_recorded,
    line_from_dict,
    merge,
    parse_option,
)


def test_a_clean_line_is_clean_and_described() -> None:
    assert LineConditions().clean
    assert describe(None) == "clean"
    line = {"codec": "mulaw8k", "packet_loss": 0.1, "packet_loss_burst": 3, "jitter_ms": 20}
    assert describe(line) == "mulaw8k loss 10% (burst 3) jitter 20ms"


def test_run_option_text_and_merge() -> None:
    assert parse_option("codec=mulaw8k, packet_loss=0.1,clipping=none") == {
        "codec": "mulaw8k", "packet_loss": 0.1, "clipping": None,
    }  # fmt: skip
    merged = merge(LineConditions(codec="mulaw8k", gain_db=3), {"packet_loss": 0.2})
    assert (merged.codec, merged.gain_db, merged.packet_loss) == ("mulaw8k", 3, 0.2)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("packet_loss=1.5", "packet_loss: must be 0..1, got 1.5"),
        ("packet_loss=-0.1", "packet_loss: must be 0..1"),
        ("codec=gsm", "codec: 'gsm' is not one of: pcm, mulaw8k"),
        ("loss=0.1", "loss: unknown field"),
        ("packet_loss", "expected FIELD=VALUE"),
        ("jitter_ms=fast", "jitter_ms: 'fast' is not a number"),
    ],
)
def test_bad_run_options_name_the_field(text: str, problem: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_option(text)
    assert problem in str(caught.value)


def test_a_burst_too_short_for_the_rate_is_refused() -> None:
    with pytest.raises(ValueError, match="packet_loss_burst"):
        line_from_dict({"packet_loss": 0.9, "packet_loss_burst": 2})


def test_a_recorded_line_is_described_with_its_losses() -> None:
    assert describe_recorded(None) == "clean"
    line = {"codec": "mulaw8k", "packets": 100, "lost": 7, "late": 3}
    assert describe_recorded(line) == "mulaw8k, 10/100 packets lost"
    text = {"codec": "mulaw8k", "not_applicable": "a text session"}
    assert describe_recorded(text) == "mulaw8k (not applied: text)"
