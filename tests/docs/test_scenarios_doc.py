"""docs/scenarios.md is complete and its worked example is real.

The worked example's whole file validates; each step's fragment is part of
that file (so the steps and the file cannot drift apart); every field of the
generated schema, every DB operator and every tool-effect operation is
documented on the page. (The page's shell blocks, which run the example
through the bots, the scorer and the stand-in judge, are run by
test_shell_blocks.py.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.docs.test_shell_blocks import ROOT, blocks
from vae.recordings.scenarios.lint import lint_arguments
from vae.recordings.scenarios.parts import DB_OPERATORS, EFFECT_OPERATIONS
from vae.recordings.scenarios.schema import scenario_schema

DOC = ROOT / "docs" / "scenarios.md"
EXAMPLE = "my-scenarios/dentist_booking.yaml"


def _contained(part: Any, whole: Any) -> bool:
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(
            k in whole and _contained(v, whole[k]) for k, v in part.items()
        )
    return bool(part == whole)


def _example() -> tuple[str, list[Any]]:
    found = blocks(DOC)
    whole = next(b for b in found if b.file == EXAMPLE)
    start = next(i for i, b in enumerate(found) if b.text.startswith("name: dentist_booking"))
    end = found.index(whole)
    # The steps: the YAML fragments from the first step up to the whole file.
    steps = [b for b in found[start:end] if b.language == "yaml" and not b.file]
    return whole.text, [yaml.safe_load(b.text) for b in steps]


def test_the_worked_example_validates(tmp_path: Path) -> None:
    text, _ = _example()
    path = tmp_path / "dentist_booking.yaml"
    path.write_text(text, encoding="utf-8")
    result = lint_arguments([str(path)])
    assert result.problems == []
    assert [s.name for s in result.scenarios] == ["dentist_booking"]


def test_every_step_is_part_of_the_whole_file() -> None:
    text, steps = _example()
    whole = yaml.safe_load(text)
    assert len(steps) == 5
    for step in steps:
        assert _contained(step, whole), step


def test_every_field_and_operator_is_documented() -> None:
    page = DOC.read_text(encoding="utf-8")
    for name, definition in scenario_schema()["$defs"].items():
        for prop in definition["properties"]:
            assert f"`{prop}`" in page, f"{name}.{prop} is not documented in docs/scenarios.md"
    for op in (*DB_OPERATORS, *EFFECT_OPERATIONS):
        assert f"`{op}`" in page, op


def test_no_product_doc_points_outside_the_repository() -> None:
    for doc in [ROOT / "README.md", ROOT / "examples" / "README.md", *ROOT.glob("docs/*.md")]:
        text = doc.read_text(encoding="utf-8")
        assert "DESIGN" not in text and "../shared" not in text, doc


def test_no_source_file_points_to_a_design_document_it_does_not_ship() -> None:
    """Docstrings and comments name repository docs, never a design file left outside it."""
    here = Path(__file__).resolve()
    roots = ["bots", "bridge_service", "cli", "recordings", "scorer_service", "vae", "protos"]
    files = [f for r in roots for f in (ROOT / r).rglob("*") if f.suffix in {".py", ".proto"}]
    files += [*(ROOT / "benchmarks").rglob("*.py"), *(ROOT / "scripts").rglob("*.*")]
    files += [*(ROOT / "tests").rglob("*.py"), *(ROOT / "examples").glob("*/*.[jp][sy]")]
    offenders = []
    for f in files:
        text = f.read_text(encoding="utf-8", errors="replace")
        if f.resolve() != here and ("DESIGN.md" in text or "../shared" in text):
            offenders.append(str(f.relative_to(ROOT)))
    assert files and not offenders
