"""The import direction described in the README ("Layout") holds.

- the two services never import each other;
- the store (recordings) imports no protobuf, no grpc and no service;
- bots import only the contract (``vae``), never a service, the store or the CLI.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = {"vae", "recordings", "bridge_service", "scorer_service", "cli", "bots"}

FORBIDDEN: dict[str, set[str]] = {
    "recordings": {"vae", "bridge_service", "scorer_service", "cli", "bots", "grpc", "google"},
    "bridge_service": {"scorer_service", "cli", "bots"},
    "scorer_service": {"bridge_service", "cli", "bots"},
    "bots": {"recordings", "bridge_service", "scorer_service", "cli"},
    "vae": {"recordings", "bridge_service", "scorer_service", "cli", "bots"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def _files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_import_direction(package: str) -> None:
    files = _files(package)
    assert files, f"no sources found for {package}"
    bad = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in files
        for name in sorted(_imports(path) & FORBIDDEN[package])
    ]
    assert not bad, "\n".join(bad)


def test_protobuf_stays_at_the_service_edges() -> None:
    """Only servicer/convert/server modules (and the scorer's wire client) touch *_pb2."""
    edge_names = ("servicer", "convert", "server", "wire")
    offenders = [
        str(path.relative_to(ROOT))
        for package in ("bridge_service", "scorer_service")
        for path in _files(package)
        if "_pb2" in path.read_text() and not any(n in path.stem for n in edge_names)
    ]
    assert not offenders, offenders
