"""The scenario JSON Schema and the scenario model agree; the shipped file is the generated one.

The schema is generated from the dataclasses; these tests derive each from the
other: every field is a property (and every property a field or a declared
alias), required properties are the fields without defaults, and a document
built from the schema's defaults parses into the model's defaults. An
independent JSON Schema implementation (``jsonschema``) then checks that the
example suite validates and each broken file that the schema can judge is
rejected.
"""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from vae.bots.brains import script_format
from vae.recordings.scenarios import caller, line, model, parse, parts, tools
from vae.recordings.scenarios.docs import FIELD_DOCS
from vae.recordings.scenarios.schema import (
    ALIASES,
    SCHEMA_FILE,
    SIDE_INLINE,
    scenario_schema,
    schema_text,
)
from vae.scorer_service.scorers import db_assertion
from vae.tools import jsondb

ROOT = Path(__file__).resolve().parents[3]
SUITE = sorted((ROOT / "examples" / "suite").glob("*.yaml"))
BROKEN = ROOT / "tests" / "recordings" / "scenarios" / "broken_scenarios"
SCHEMA = scenario_schema()
DEFS: dict[str, Any] = SCHEMA["$defs"]


def _dataclasses() -> list[type]:
    return [
        c
        for module in (model, parts, caller, line, tools)
        for c in vars(module).values()
        if dataclasses.is_dataclass(c) and c.__module__ == module.__name__
    ]


def test_shipped_file_is_the_generated_schema() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "regenerate: vae schema scenario -o recordings/scenarios/scenario.schema.json"
    )


def test_schema_is_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("cls", [c for c in _dataclasses() if c.__name__ in DEFS])
def test_every_field_is_a_property_and_every_property_a_field(cls: type) -> None:
    definition = DEFS[cls.__name__]
    fields = {f.name for f in dataclasses.fields(cls)}
    if cls is model.SideSpec:
        for inline in SIDE_INLINE:
            fields |= {f.name for f in dataclasses.fields(inline)}
    aliases = set(ALIASES.get(cls.__name__, {}))
    assert set(definition["properties"]) == fields | aliases
    required = {
        f.name
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    assert set(definition.get("required", [])) == required
    # A side passes other keys to its own bot; everything else is closed.
    assert definition["additionalProperties"] is (cls is model.SideSpec)


def test_top_level_properties_are_what_the_model_accepts() -> None:
    assert set(DEFS["Scenario"]["properties"]) == parse._TOP_LEVEL


def test_schema_defaults_parse_into_the_model_defaults() -> None:
    """Build a document from the schema alone; the model must read it as its own defaults."""
    props = DEFS["Scenario"]["properties"]
    doc = {k: p["default"] for k, p in props.items() if "default" in p}
    parsed = parse.scenario_from_dict({**doc, "name": "x"}, "from-schema")
    assert parsed == model.Scenario(name="x")


def test_every_field_has_a_description() -> None:
    documented = {f"{c.__name__}.{f.name}" for c in _dataclasses() for f in dataclasses.fields(c)}
    missing = sorted(documented - set(FIELD_DOCS))
    stale = sorted(set(FIELD_DOCS) - documented)
    assert not missing, f"describe these in recordings/scenario_docs.py: {missing}"
    assert not stale


def test_bot_and_scorer_formats_match_the_declared_parts() -> None:
    """The reference bots and the scorer parse at run time what the schema declares."""
    assert {f.name for f in dataclasses.fields(parts.ScriptItem)} == script_format._ITEM_KEYS
    assert set(jsondb.OPERATIONS) == set(parts.EFFECT_OPERATIONS)
    assert set(typing.get_args(parts.EffectOperation)) == set(parts.EFFECT_OPERATIONS)
    ops = set(db_assertion.OPERATORS) | set(db_assertion.EXISTENCE)
    assert ops == set(parts.DB_OPERATORS) == set(typing.get_args(parts.DbOperator))
    bot_keys = {"speaks_first", "response_delay_s", "yield_after_s", "tool_effects", "script"}
    assert {f.name for f in dataclasses.fields(parts.ReferenceBotConfig)} == bot_keys


@pytest.mark.parametrize("path", SUITE, ids=lambda p: p.name)
def test_every_example_file_validates_and_names_the_schema(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    jsonschema.validate(yaml.safe_load(text), SCHEMA)
    assert text.startswith("# yaml-language-server: $schema=../../recordings/scenarios/")


#: Broken files whose mistakes a JSON Schema can express, and those it cannot
#: (the validator's extra checks: YAML syntax, duplicate keys, cross-field
#: rules, files on disk, names across files).
SCHEMA_REJECTS = ["typos.yaml", "types.yaml", "no_name.yaml", "two.yaml", "broken.json"]
BEYOND_SCHEMA = ["tools.yaml", "duplicate_key.yaml", "missing_noise.yaml"]


@pytest.mark.parametrize("name", SCHEMA_REJECTS)
def test_the_schema_rejects_each_broken_file(name: str) -> None:
    data = yaml.safe_load((BROKEN / name).read_text(encoding="utf-8"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, SCHEMA)


@pytest.mark.parametrize("name", BEYOND_SCHEMA)
def test_mistakes_beyond_the_schema_are_the_validators(name: str) -> None:
    data = yaml.safe_load((BROKEN / name).read_text(encoding="utf-8"))
    jsonschema.validate(data, SCHEMA)  # the schema cannot see these ...
    from vae.recordings.scenarios.lint import lint_arguments

    assert lint_arguments([str(BROKEN / name)]).problems  # ... vae validate does


def test_every_broken_file_is_covered() -> None:
    names = {p.name for p in BROKEN.iterdir()}
    assert names == {*SCHEMA_REJECTS, *BEYOND_SCHEMA, "unparsable.yaml"}


def test_vae_schema_scenario_prints_the_shipped_schema(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from vae.cli.main import vae

    printed = CliRunner().invoke(vae, ["schema", "scenario"])
    assert printed.exit_code == 0 and printed.stdout == SCHEMA_FILE.read_text(encoding="utf-8")
    written = CliRunner().invoke(vae, ["schema", "scenario", "-o", str(tmp_path / "s.json")])
    assert written.exit_code == 0 and written.stdout == ""
    assert (tmp_path / "s.json").read_text(encoding="utf-8") == printed.stdout
