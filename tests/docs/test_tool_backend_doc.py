"""docs/scenarios.md, "A tool backend": the scenario it shows is the example it runs."""

from __future__ import annotations

from tests.docs.test_scenarios_doc import DOC
from tests.docs.test_shell_blocks import ROOT, blocks

EXAMPLE = ROOT / "examples" / "tool_backend" / "restaurant_book_table.yaml"


def test_the_shown_scenario_is_the_example_file() -> None:
    shown = next(b for b in blocks(DOC) if b.file == "my-tools/restaurant_book_table.yaml")
    example = EXAMPLE.read_text(encoding="utf-8").splitlines()
    # The file's first line points editors at the schema by a path relative to it.
    assert example[0].startswith("# yaml-language-server:")
    assert shown.text.splitlines() == example[1:]
