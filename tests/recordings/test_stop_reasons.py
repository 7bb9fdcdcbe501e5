"""The one table of stop reasons: complete, and the same as docs/scoring.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vae.bridge.v1 import bridge_pb2
from vae.bridge_service.config import StopReason
from vae.recordings import stop_reasons
from vae.recordings.stop_reasons import TABLE, describe, is_finished, normalise

DOC = Path(__file__).resolve().parents[2] / "docs" / "scoring.md"


def test_every_enum_value_is_classified() -> None:
    names = {k.removeprefix("STOP_REASON_").lower() for k, _ in bridge_pb2.StopReason.items()}
    names.discard("unspecified")
    assert names <= set(stop_reasons.BY_NAME), names - set(stop_reasons.BY_NAME)
    assert {str(s) for s in StopReason} <= set(stop_reasons.BY_NAME)


def test_docs_table_matches_the_code() -> None:
    rows = re.findall(r"^\| `([a-z_]+)` \| (finished|unfinished) \|", DOC.read_text(), re.M)
    assert dict(rows) == {i.name: ("finished" if i.finished else "unfinished") for i in TABLE}


@pytest.mark.parametrize(
    ("value", "finished"),
    [
        ("end_tool", True),
        ("STOP_REASON_END_TOOL", True),
        ("[EXIT]", True),
        ("bot_error", True),
        ("cancelled", False),
        ("peer_never_joined", False),
        ("attempt_crashed", False),
        (None, False),
        ("", False),
        ("something_new", False),
    ],
)
def test_is_finished(value: str | None, finished: bool) -> None:
    assert is_finished(value) is finished


def test_describe_and_normalise() -> None:
    assert normalise(" STOP_REASON_Cancelled ") == "cancelled"
    assert "cancelled" in describe("cancelled")
    assert describe(None).startswith("no stop reason")
    assert "unknown stop reason" in describe("zzz")
