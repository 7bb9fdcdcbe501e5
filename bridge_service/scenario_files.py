"""Loading scenario sources: files, folders, inline text, Python modules.

The format is docs/scenarios.md. Every source is read and validated before a
run starts; :func:`load_sources` raises one
:class:`~recordings.errors.ScenarioError` listing every problem (source,
position, field, what was wrong), so a broken file never costs a
half-finished run.

- a ``.yaml``/``.yml``/``.json`` file holds one scenario or a list of them;
- a folder is a suite: every such file in it, recursively, in sorted order;
- inline text is JSON or YAML (one scenario or a list);
- a Python module (dotted name, or a ``.py`` path) exposes Scenario objects:
  ``SCENARIOS`` (a list) if defined, else every module-level object that is a
  :class:`~recordings.scenario.Scenario`. Other classes with the same fields
  (dataclasses, pydantic models, plain objects) are accepted too.

Besides the document's own fields, files named by the scenario (noise files)
must exist and a ``sync_hook`` must import, so those fail up front as well.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from bridge_service.sync import SyncHookError, load_hook
from recordings.errors import ScenarioError
from recordings.scenario import Scenario
from recordings.scenario_parse import scenario_from_dict

SUFFIXES = (".yaml", ".yml", ".json")
#: Files in a suite folder that are not scenarios: JSON Schemas kept for editors.
SKIPPED_SUFFIX = ".schema.json"


def suite_files(folder: Path) -> list[Path]:
    """The scenario files of a suite folder, recursively, in sorted order."""
    return sorted(
        p
        for p in folder.rglob("*")
        if p.suffix in SUFFIXES and p.is_file() and not p.name.endswith(SKIPPED_SUFFIX)
    )


@dataclasses.dataclass(frozen=True)
class Source:
    kind: str  # "path" | "python_module" | "inline"
    value: str


def _documents(data: Any) -> list[Any]:
    return list(data) if isinstance(data, list) else [data]


def _parse_text(text: str, source: str, *, json_only: bool = False) -> Any:
    try:
        if json_only:
            return json.loads(text)
        return yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ScenarioError(source, "<document>", f"cannot parse: {exc}") from exc


def load_file(path: Path) -> list[Scenario]:
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(source, "<file>", f"cannot read: {exc}") from exc
    data = _parse_text(text, source, json_only=path.suffix == ".json")
    if data is None:
        raise ScenarioError(source, "<document>", "empty file")
    docs = _documents(data)
    return [
        _checked(scenario_from_dict(doc, source if len(docs) == 1 else f"{source}[{i}]"), path)
        for i, doc in enumerate(docs)
    ]


def load_path(value: str) -> list[Scenario]:
    path = Path(value).expanduser()
    if path.is_dir():
        files = suite_files(path)
        if not files:
            raise ScenarioError(value, "<folder>", "holds no .yaml, .yml or .json scenario files")
        return [s for f in files for s in load_file(f)]
    if not path.exists():
        raise ScenarioError(value, "<file>", "does not exist")
    if path.suffix == ".py":
        return load_module(value)
    if path.suffix not in SUFFIXES:
        raise ScenarioError(value, "<file>", f"unknown type {path.suffix!r}; use {SUFFIXES}")
    return load_file(path)


def load_inline(text: str) -> list[Scenario]:
    data = _parse_text(text, "<inline>")
    if data is None:
        raise ScenarioError("<inline>", "<document>", "empty")
    docs = _documents(data)
    return [_checked(scenario_from_dict(d, f"<inline>[{i}]"), None) for i, d in enumerate(docs)]


def _import(value: str) -> Any:
    if value.endswith(".py"):
        path = Path(value).expanduser().resolve()
        if not path.exists():
            raise ScenarioError(value, "<module>", "does not exist")
        name = f"vae_scenarios_{abs(hash(str(path)))}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ScenarioError(value, "<module>", "cannot be imported")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise ScenarioError(value, "<module>", f"failed to import: {exc!r}") from exc
        return module
    try:
        return importlib.import_module(value)
    except Exception as exc:
        raise ScenarioError(value, "<module>", f"failed to import: {exc!r}") from exc


def _as_dict(obj: Any, where: str) -> dict[str, Any]:
    if isinstance(obj, Scenario):
        return obj.to_dict()
    if isinstance(obj, dict):
        return obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dict(dump())
    if hasattr(obj, "__dict__"):
        return {k: v for k, v in vars(obj).items() if not k.startswith("_")}
    raise ScenarioError(where, "<object>", f"{type(obj).__name__} is not a scenario")


def load_module(value: str) -> list[Scenario]:
    module = _import(value)
    objects: Iterable[Any]
    if hasattr(module, "SCENARIOS"):
        objects = list(module.SCENARIOS)
    else:
        objects = [v for k, v in vars(module).items() if isinstance(v, Scenario) and k[:1] != "_"]
    out = []
    for i, obj in enumerate(objects):
        where = f"{value}[{i}]"
        out.append(_checked(scenario_from_dict(_as_dict(obj, where), where), None))
    if not out:
        raise ScenarioError(value, "SCENARIOS", "the module exposes no Scenario objects")
    return out


def _checked(sc: Scenario, origin: Path | None) -> Scenario:
    """Check what the document refers to: noise files exist, the sync hook imports."""
    where = f"{origin or '<source>'} [{sc.name}]"
    if sc.noise is not None:
        for i, name in enumerate(sc.noise.noise_files):
            path = Path(name).expanduser()
            if not path.is_absolute() and origin is not None:
                path = origin.parent / path
            if not path.is_file():
                raise ScenarioError(where, f"noise.noise_files[{i}]", f"{path} does not exist")
            sc.noise.noise_files[i] = str(path.resolve())
    if sc.sync_hook is not None:
        try:
            load_hook(sc.sync_hook)
        except SyncHookError as exc:
            raise ScenarioError(where, "sync_hook", str(exc)) from exc
    return sc


def load_sources(sources: list[Source]) -> list[Scenario]:
    """All scenarios of all sources, validated; names must be unique across them.

    Raises one :class:`ScenarioError` listing every problem of every source
    (``bridge_service/scenario_lint.py`` finds them, with file positions).
    """
    from bridge_service.scenario_lint import lint_sources

    result = lint_sources(sources)
    if result.problems:
        raise result.error()
    return result.scenarios
