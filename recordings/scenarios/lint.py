"""Every problem in every scenario source, with file positions, before anything runs.

Why one pass: ``vae validate``, ``vae run`` (before it asks for a run) and the
bridge's ``StartRun`` must all refuse a broken suite with *all* its problems,
each as ``file:line:column: field: problem``, so one edit fixes them. This
module reads the sources (files, folders, inline text, Python modules), runs
the schema check of :mod:`vae.recordings.scenarios.check` on every document, finds
each problem's position in the YAML (or JSON) text, then checks what the
documents refer to (noise files, sync hooks) and that names are unique.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from vae.recordings.errors import ScenarioError
from vae.recordings.scenarios.check import Path as FieldPath
from vae.recordings.scenarios.check import check, parse_field
from vae.recordings.scenarios.model import Scenario
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.recordings.scenarios.sources import (
    SUFFIXES,
    Source,
    as_dict,
    check_references,
    documents,
    import_source,
    suite_files,
)


@dataclass(frozen=True)
class Problem:
    file: str
    field: str
    problem: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        return f"{where}: {self.field}: {self.problem}"


@dataclass
class LintResult:
    files: list[str] = field(default_factory=list)
    scenarios: list[Scenario] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    #: scenario name -> (file, position of its name) for the duplicate check.
    names: dict[str, str] = field(default_factory=dict)

    def error(self) -> ScenarioError:
        first = self.problems[0]
        return ScenarioError(
            first.file, first.field, first.problem, [str(p) for p in self.problems]
        )


def _node_at(node: Any, path: FieldPath, at_key: bool) -> Any:
    """The YAML node of ``path`` (the key's node when ``at_key``), or the deepest found."""
    for depth, part in enumerate(path):
        last = depth == len(path) - 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.value == part:
                    node = key if (last and at_key) else value
                    break
            else:
                return node
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return node
            node = node.value[part]
        else:
            return node
    return node


def _duplicate_keys(node: Any, path: FieldPath, out: list[tuple[FieldPath, Any]]) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: set[Any] = set()
        for key, value in node.value:
            if key.value in seen:
                out.append(((*path, str(key.value)), key))
            seen.add(key.value)
            _duplicate_keys(value, (*path, str(key.value)), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _duplicate_keys(item, (*path, i), out)


def _yaml_problem(file: str, exc: yaml.YAMLError) -> Problem:
    """A parse error in one line: what, where, and where the broken construct began."""
    if not isinstance(exc, yaml.MarkedYAMLError) or exc.problem_mark is None:
        return Problem(file, "<document>", f"cannot parse: {exc}")
    mark = exc.problem_mark
    text = f"cannot parse: {exc.problem}"
    if exc.context:
        began = exc.context_mark
        text += f" ({exc.context}"
        text += f" begun at line {began.line + 1}, column {began.column + 1})" if began else ")"
    return Problem(file, "<document>", text, mark.line + 1, mark.column + 1)


class _Linter:
    def __init__(self) -> None:
        self.result = LintResult()

    def add(self, file: str, field_name: str, problem: str, node: Any = None) -> None:
        line = column = None
        if node is not None:
            line, column = node.start_mark.line + 1, node.start_mark.column + 1
        self.result.problems.append(Problem(file, field_name, problem, line, column))

    def documents(self, file: str, docs: list[Any], root: Any, origin: Path | None) -> None:
        """Check each scenario document of one source; ``root`` is its YAML node tree."""
        many = len(docs) > 1 or isinstance(root, yaml.SequenceNode)
        for i, doc in enumerate(docs):
            prefix: FieldPath = (i,) if many else ()
            name = doc.get("name") if isinstance(doc, dict) else None
            unique = not isinstance(name, str) or self.unique(file, name.strip(), root, prefix)
            issues = check(doc)
            for issue in issues:
                node = _node_at(root, (*prefix, *issue.path), issue.at_key) if root else None
                label = f"[{i}].{issue.field}" if many else issue.field
                self.add(file, label.replace(".<document>", ""), issue.problem, node)
            if issues:
                continue
            source = f"{file}[{i}]" if many else file
            try:
                scenario = check_references(scenario_from_dict(doc, source), origin)
            except ScenarioError as exc:
                node = _node_at(root, (*prefix, *parse_field(exc.field)), False) if root else None
                self.add(file, exc.field, exc.problem, node)
                continue
            if unique:
                self.result.scenarios.append(scenario)

    def unique(self, file: str, name: str, root: Any, prefix: FieldPath) -> bool:
        """Record ``name``; report it (and return False) when another document has it."""
        if name in self.result.names:
            node = _node_at(root, (*prefix, "name"), False) if root else None
            label = f"[{prefix[0]}].name" if prefix else "name"
            self.add(file, label, f"{name!r} also defined in {self.result.names[name]}", node)
            return False
        self.result.names[name] = file
        return True

    def text(self, file: str, text: str, origin: Path | None, json_only: bool) -> None:
        try:
            data = json.loads(text) if json_only else yaml.safe_load(text)
        except json.JSONDecodeError as exc:
            self.result.problems.append(
                Problem(file, "<document>", f"cannot parse: {exc.msg}", exc.lineno, exc.colno)
            )
            return
        except yaml.YAMLError as exc:
            self.result.problems.append(_yaml_problem(file, exc))
            return
        if data is None:
            self.add(file, "<document>", "empty file")
            return
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError:
            root = None  # valid JSON that YAML cannot read: no positions
        dupes: list[tuple[FieldPath, Any]] = []
        _duplicate_keys(root, (), dupes)
        for path, node in dupes:
            self.add(file, ".".join(str(p) for p in path), "duplicate key", node)
        self.documents(file, documents(data), root, origin)

    def file(self, path: Path) -> None:
        self.result.files.append(str(path))
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.add(str(path), "<file>", f"cannot read: {exc}")
            return
        self.text(str(path), text, path, json_only=path.suffix == ".json")

    def path(self, value: str) -> None:
        path = Path(value).expanduser()
        if path.is_dir():
            files = suite_files(path)
            if not files:
                self.add(value, "<folder>", "holds no .yaml, .yml or .json scenario files")
            for f in files:
                self.file(f)
        elif not path.exists():
            self.add(value, "<file>", "does not exist")
        elif path.suffix == ".py":
            self.module(value)
        elif path.suffix not in SUFFIXES:
            self.add(value, "<file>", f"unknown type {path.suffix!r}; use {SUFFIXES}")
        else:
            self.file(path)

    def module(self, value: str) -> None:
        self.result.files.append(value)
        try:
            module = import_source(value)
        except ScenarioError as exc:
            self.add(value, exc.field, exc.problem)
            return
        if hasattr(module, "SCENARIOS"):
            objects = list(module.SCENARIOS)
        else:
            objects = [
                v for k, v in vars(module).items() if isinstance(v, Scenario) and k[:1] != "_"
            ]
        if not objects:
            self.add(value, "SCENARIOS", "the module exposes no Scenario objects")
        docs = []
        for i, obj in enumerate(objects):
            try:
                docs.append(as_dict(obj, f"{value}[{i}]"))
            except ScenarioError as exc:
                self.add(value, f"[{i}]", exc.problem)
        self.documents(value, docs, None, None)


def lint_sources(sources: list[Source]) -> LintResult:
    """Read and check every source; collect every problem (nothing raised)."""
    linter = _Linter()
    if not sources:
        linter.add("<request>", "sources", "give at least one scenario source")
    for src in sources:
        if src.kind == "path" and src.value:
            linter.path(src.value)
        elif src.kind == "python_module" and src.value:
            linter.module(src.value)
        elif src.kind == "inline" and src.value:
            linter.text("<inline>", src.value, None, json_only=False)
        else:
            linter.add("<request>", "sources", f"empty or unknown source {src.kind!r}")
    result = linter.result
    order = {f: i for i, f in enumerate(dict.fromkeys(p.file for p in result.problems))}
    result.problems.sort(key=lambda p: (order[p.file], p.line or 0, p.column or 0))
    return result


def lint_arguments(values: list[str]) -> LintResult:
    """What ``vae validate`` takes: paths (files, folders, ``.py``) or dotted module names."""
    sources = []
    for value in values:
        path = Path(value)
        is_module = not path.exists() and all(p.isidentifier() for p in value.split("."))
        sources.append(Source("python_module" if is_module else "path", value))
    return lint_sources(sources)


def load_sources(sources: list[Source]) -> list[Scenario]:
    """All scenarios of all sources, validated; names must be unique across them.

    Raises one :class:`ScenarioError` listing every problem of every source.
    """
    result = lint_sources(sources)
    if result.problems:
        raise result.error()
    return result.scenarios


def load_path(value: str) -> list[Scenario]:
    """The scenarios of one file, folder or ``.py`` module (see :func:`load_sources`)."""
    return load_sources([Source("path", value)])


def load_inline(text: str) -> list[Scenario]:
    """The scenarios of inline JSON or YAML text (see :func:`load_sources`)."""
    return load_sources([Source("inline", text)])
