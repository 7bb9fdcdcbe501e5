"""Scenario sources: what they are and how each is read into documents.

The format is docs/scenarios.md. This module knows the kinds of source and
reads them; :mod:`vae.recordings.scenarios.lint` checks every document of every
source in one pass and is where scenarios are loaded from
(:func:`~vae.recordings.scenarios.lint.load_sources` raises one
:class:`~vae.recordings.errors.ScenarioError` listing every problem, so a broken
file never costs a half-finished run).

- a ``.yaml``/``.yml``/``.json`` file holds one scenario or a list of them;
- a folder is a suite: every such file in it, recursively, in sorted order;
- inline text is JSON or YAML (one scenario or a list);
- a Python module (dotted name, or a ``.py`` path) exposes Scenario objects:
  ``SCENARIOS`` (a list) if defined, else every module-level object that is a
  :class:`~vae.recordings.scenarios.model.Scenario`. Other classes with the same fields
  (dataclasses, pydantic models, plain objects) are accepted too.

Besides the document's own fields, files named by the scenario (noise files)
must exist and a ``sync_hook`` must import, so those fail up front as well.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from vae.recordings.errors import ScenarioError
from vae.recordings.scenarios.hooks import SyncHookError, load_hook
from vae.recordings.scenarios.model import Scenario

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


def documents(data: Any) -> list[Any]:
    return list(data) if isinstance(data, list) else [data]


def import_source(value: str) -> Any:
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


def as_dict(obj: Any, where: str) -> dict[str, Any]:
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


def check_references(sc: Scenario, origin: Path | None) -> Scenario:
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
