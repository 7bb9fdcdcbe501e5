"""Regenerate the Python code for protos/ into vae/ (the only way it is produced).

Run with the pinned generator (`pip install -e '.[dev]'` brings grpcio-tools and
mypy-protobuf at the versions pyproject.toml pins). CI runs this and fails when
`git status` shows a difference afterwards.
"""

from __future__ import annotations

import sys
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTOS = ROOT / "protos"


def main() -> int:
    sources = sorted(str(p.relative_to(PROTOS)) for p in PROTOS.rglob("*.proto"))
    args = [
        "grpc_tools.protoc",
        f"-I{PROTOS}",
        f"--python_out={ROOT}",
        f"--grpc_python_out={ROOT}",
        f"--mypy_out={ROOT}",
        f"--mypy_grpc_out={ROOT}",
        *sources,
    ]
    code = protoc.main(args)
    if code != 0:
        print(f"protoc failed with exit code {code}", file=sys.stderr)
        return int(code)
    for source in sources:
        package_dir = ROOT / Path(source).parent
        # Every generated folder is a regular package so mypy and setuptools see it.
        for folder in [package_dir, *package_dir.parents]:
            if folder == ROOT or ROOT not in folder.parents:
                break
            init = folder / "__init__.py"
            if not init.exists():
                init.write_text('"""Generated from protos/ by scripts/gen_protos.py."""\n')
    print(f"generated {len(sources)} proto files into {ROOT / 'vae'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
