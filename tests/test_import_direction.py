"""The import direction described in docs/architecture.md holds, at every level.

- the two services never import each other; the store (``vae.recordings``)
  imports no protobuf, no grpc and no service; bots import only the contract;
- no import circle anywhere, type-only imports (``TYPE_CHECKING``) and imports
  inside functions included;
- inside each product package, units (subpackages and top-level modules) import
  only from their own layer or below, as the layer list in the package's
  ``__init__`` docstring says; a new unit must be placed in that list;
- inside every package, no circle between its units either.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("recordings", "bridge_service", "scorer_service", "cli", "bots")
#: The contract and the small runtime helpers beside it (``vae`` minus the product packages).
CORE = {"vae.common", "vae.bridge", "vae.scorer", "vae.internal", "vae.serving", "vae.status",
        "vae.dtmf", "vae.speech", "vae.redaction", "vae.tools", "vae.sip", "vae.otel"}  # fmt: skip

FORBIDDEN: dict[str, set[str]] = {
    "vae.recordings": CORE
    | {f"vae.{p}" for p in PRODUCT if p != "recordings"}
    | {"grpc", "google"},
    "vae.bridge_service": {"vae.scorer_service", "vae.cli", "vae.bots"},
    "vae.scorer_service": {"vae.bridge_service", "vae.cli", "vae.bots"},
    "vae.bots": {f"vae.{p}" for p in PRODUCT if p != "bots"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return "vae." + ".".join(parts) if parts[0] in PRODUCT else ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    """Every product module by its installed name (the real folders, not the ``vae/`` links)."""
    found = {_module_name(p): p for pkg in PRODUCT for p in sorted((ROOT / pkg).rglob("*.py"))}
    for path in sorted((ROOT / "vae").rglob("*.py")):
        if not re.search(r"_pb2(_grpc)?\.py$", path.name):
            found[_module_name(path)] = path
    return found


@cache
def _imports(name: str) -> frozenset[str]:
    """Every name ``name`` imports, anywhere in the file (resolved to a module where one exists)."""
    tree = ast.parse(_modules()[name].read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in _modules() else node.module)
    return frozenset(found)


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _ours(name: str) -> set[str]:
    return {m for m in _imports(name) if m in _modules() and m != name}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_import_direction(package: str) -> None:
    names = [m for m in _modules() if _within(m, package)]
    assert names, f"no sources found for {package}"
    bad = [
        f"{_modules()[m].relative_to(ROOT)} imports {imported}"
        for m in names
        for imported in sorted(_imports(m))
        if any(_within(imported, f) for f in FORBIDDEN[package])
        or (imported == "vae" and package == "vae.recordings")
    ]
    assert not bad, "\n".join(bad)


def test_the_contract_imports_no_product_package() -> None:
    bad = [
        f"{path.relative_to(ROOT)} imports {imported}"
        for name, path in _modules().items()
        if not any(_within(name, f"vae.{p}") for p in PRODUCT)
        for imported in sorted(_imports(name))
        if any(_within(imported, f"vae.{p}") for p in PRODUCT)
    ]
    assert not bad, "\n".join(bad)


def test_no_import_circles_between_modules() -> None:
    graph = {name: _ours(name) for name in _modules()}
    assert not _circles(graph), _circles(graph)


def _packages() -> list[str]:
    return sorted(n for n, p in _modules().items() if p.name == "__init__.py")


@pytest.mark.parametrize("package", _packages())
def test_no_circles_between_the_units_of_a_package(package: str) -> None:
    """A unit is a subpackage or a module directly inside ``package``."""
    graph = _unit_graph(package)
    assert not _circles(graph), f"{package}: {_circles(graph)}"


def _unit(name: str, package: str) -> str | None:
    if not name.startswith(package + "."):
        return None
    return name[len(package) + 1 :].split(".")[0]


def _unit_graph(package: str) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for name in _modules():
        unit = _unit(name, package)
        if unit is None:
            continue
        graph[unit]
        for imported in _ours(name):
            other = _unit(imported, package)
            if other is not None and other != unit:
                graph[unit].add(other)
    return graph


def _layers(package: str) -> dict[str, int]:
    doc = ast.get_docstring(ast.parse((ROOT / package / "__init__.py").read_text())) or ""
    assert "Layers, bottom to top" in doc, f"{package}/__init__.py lists no layers"
    layers: dict[str, int] = {}
    for number, names in re.findall(r"^(\d+)\. (.+)$", doc.split("Layers, bottom to top")[1], re.M):
        for unit in (n.strip() for n in names.split(",")):
            assert unit not in layers, f"{package}: {unit} is listed twice"
            layers[unit] = int(number)
    return layers


@pytest.mark.parametrize("package", PRODUCT)
def test_units_import_only_their_layer_or_below(package: str) -> None:
    layers = _layers(package)
    graph = _unit_graph(f"vae.{package}")
    units = set(graph) - {"__init__"}
    assert units - set(layers) == set(), f"{package}: place these in the layer list"
    assert set(layers) - units == set(), f"{package}: the layer list names units that do not exist"
    upward = [
        f"{package}.{unit} (layer {layers[unit]}) imports {package}.{other} (layer {layers[other]})"
        for unit in sorted(units)
        for other in sorted(graph[unit] - {"__init__"})
        if layers[other] > layers[unit]
    ]
    assert not upward, "\n".join(upward)


def _docstring(init: Path) -> str:
    return ast.get_docstring(ast.parse(init.read_text())) or "" if init.exists() else ""


def test_every_package_says_what_lives_there() -> None:
    folders = [d for pkg in PRODUCT for d in [ROOT / pkg, *(ROOT / pkg).rglob("*")] if d.is_dir()]
    silent = [
        str(d.relative_to(ROOT))
        for d in folders
        if any(d.glob("*.py")) and not _docstring(d / "__init__.py")
    ]
    assert not silent, f"packages without an __init__ docstring: {silent}"


def test_protobuf_stays_at_the_service_edges() -> None:
    """Only the gRPC edges (and the workers' and replay's wire modules) touch *_pb2."""
    edge_names = ("servicer", "convert", "server", "wire", "registration")
    offenders = [
        str(path.relative_to(ROOT))
        for name, path in _modules().items()
        if _within(name, "vae.bridge_service") or _within(name, "vae.scorer_service")
        if "_pb2" in path.read_text()
        and not any(n in path.stem for n in edge_names)
        and not _within(name, "vae.bridge_service.edge")
        and not _within(name, "vae.scorer_service.edge")
    ]
    assert not offenders, offenders


def test_nothing_imports_the_folders_by_their_bare_names() -> None:
    """``import recordings`` works only in a checkout; an installed vae has ``vae.recordings``."""
    trees = [*PRODUCT, "vae", "tests", "benchmarks", "scripts", "examples"]
    files = [p for t in trees for p in sorted((ROOT / t).rglob("*.py")) if ".venv" not in str(p)]
    bad = []
    for path in files:
        if re.search(r"_pb2(_grpc)?\.py$", path.name) or "node_modules" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            bad += [f"{path.relative_to(ROOT)}:{node.lineno} imports {n}"
                    for n in names if n.split(".")[0] in PRODUCT]  # fmt: skip
    assert not bad, "\n".join(bad)


def test_the_installed_names_are_the_folders() -> None:
    """``vae/<package>`` is a link to the top-level folder, so both names are one tree."""
    for package in PRODUCT:
        link = ROOT / "vae" / package
        assert link.is_symlink() and link.resolve() == (ROOT / package).resolve(), link
