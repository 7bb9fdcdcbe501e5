"""A scenario of the established framework, rebuilt from its ``scenario_config/``.

``metadata.json`` carries the scalar fields, matching flags, success signals
(as stored values such as ``db_state_match``), assertions, initialization
actions and the expected DB *hashes* (``expected_db_hash``,
``expected_user_db_hash``: the expected DB itself is never written).
``reference_answer.json`` carries the reference, and each side's prompt and
tools sit beside them (tools double-encoded).

vae's scenario model has no field for an expected hash without its DB, so the
hashes travel in each side's extras (``expected_db_hash``), next to the
rendered prompt the run used (``prompt``). Whatever fails validation is dropped
field by field, reported, and kept raw as an artifact by the caller.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vae.recordings.errors import ScenarioError
from vae.recordings.importers.nemo.files import read_double_json, read_json, read_text
from vae.recordings.scenarios.parse import scenario_from_dict

#: metadata.json keys copied as they are (scenario_from_dict validates them).
_COPIED = (
    "description",
    "max_duration",
    "ignore_capitalization",
    "ignore_punctuation",
    "clean_text",
    "disallow_extra_items",
    "success_signals",
    "nl_assertions",
    "db_state_assertions",
    "initialization_actions",
    "noise_config",
)


@dataclass
class ImportedScenario:
    document: dict[str, Any]
    problems: list[str] = field(default_factory=list)
    #: Raw files that could not be mapped, by artifact name.
    raw: dict[str, str] = field(default_factory=dict)


def domain_of(name: str) -> str:
    """The framework buckets domains by the name's prefix before ``__``."""
    return name.split("__", 1)[0] or "default"


def load_scenario(name: str, config_dir: Path | None) -> ImportedScenario:
    """Rebuild and validate the scenario ``name`` from ``config_dir`` (may be missing)."""
    out = ImportedScenario(document={"name": name, "domain": domain_of(name)})
    if config_dir is None or not config_dir.is_dir():
        out.problems.append("scenario_config/ missing: the scenario has only its name")
        return out
    meta, problem = read_json(config_dir / "metadata.json")
    _note(out, problem)
    if meta is None and not problem:
        out.problems.append("scenario_config/metadata.json missing")
    if meta is not None and not isinstance(meta, dict):
        out.problems.append("scenario_config/metadata.json is not an object")
        meta = None
    doc = out.document
    sides: dict[str, dict[str, Any]] = {"user": {}, "agent": {}}
    if meta is not None:
        doc["domain"] = str(meta.get("domain") or doc["domain"])
        for key in _COPIED:
            if meta.get(key) is not None:
                doc[key] = meta[key]
        for side, key in (("agent", "expected_db_hash"), ("user", "expected_user_db_hash")):
            if isinstance(meta.get(key), str):
                sides[side]["expected_db_hash"] = meta[key]
        unmapped = sorted(
            set(meta)
            - set(_COPIED)
            - {"name", "domain", "expected_db_hash", "expected_user_db_hash"}
        )
        if unmapped:
            out.raw["scenario_config/metadata.json"] = json.dumps(meta, indent=2)
    reference, problem = read_json(config_dir / "reference_answer.json")
    _note(out, problem)
    if reference is not None:
        doc["reference_answer"] = _reference(reference)
    for side in ("user", "agent"):
        prompt, problem = read_text(config_dir / f"{side}_prompt.txt")
        _note(out, problem)
        if prompt:
            sides[side]["prompt"] = prompt
        tools, problem = read_double_json(config_dir / f"{side}_tools.json")
        _note(out, problem)
        if isinstance(tools, dict) and all(isinstance(v, dict | None) for v in tools.values()):
            sides[side]["resources"] = {"tools": tools}
        elif tools is not None:
            out.problems.append(f"scenario_config/{side}_tools.json: not a tools mapping")
            out.raw[f"scenario_config/{side}_tools.json"] = json.dumps(tools)
    for side, section in sides.items():
        if section:
            doc[side] = section
    _validate(out, name)
    return out


def _reference(value: Any) -> Any:
    """The reference as vae compares it against the recorded write actions.

    A string becomes ``{"message": ...}`` (as the framework saves it). A
    ``{"actions": [...]}`` reference is unwrapped to its list: the framework
    compared it against ``[{"actions": [...]}]`` predictions, and vae compares
    against the action list itself, so the same pairs meet either way.
    """
    if isinstance(value, str):
        return {"message": value}
    if isinstance(value, dict) and set(value) == {"actions"} and isinstance(value["actions"], list):
        return value["actions"]
    return value


def _validate(out: ImportedScenario, name: str) -> None:
    """Validate; drop each offending top-level field (reported) until it passes."""
    doc = out.document
    for _ in range(len(doc) + 1):
        try:
            scenario_from_dict(doc, f"{name}/scenario_config")
            return
        except ScenarioError as exc:
            key = exc.field.split(".")[0].split("[")[0].split(" ")[0]
            if key not in doc or key == "name":
                key = _side_key(doc, exc) or key
            if key not in doc or key == "name":
                out.problems.append(f"scenario invalid ({exc}); kept only its name")
                out.document = {"name": name, "domain": domain_of(name)}
                return
            out.problems.append(f"scenario field dropped: {exc}")
            out.raw.setdefault(f"scenario_field:{key}", json.dumps(doc.pop(key), default=str))
    out.problems.append("scenario could not be validated; kept only its name")
    out.document = {"name": name, "domain": domain_of(name)}


def _side_key(doc: dict[str, Any], exc: ScenarioError) -> str | None:
    for side in ("user", "agent"):
        if f" {side}" in exc.source and side in doc:
            return side
    return None


def _note(out: ImportedScenario, problem: str) -> None:
    if problem:
        out.problems.append(f"scenario_config/{problem}")
