"""``vae redact``'s and the ``--redact`` options' bad input: clear errors, the right exit codes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.factories import SessionSpec, Turn, scenario, write_run
from tests.helpers import cli
from vae.redaction.config import SCHEMA


async def test_a_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    spec = SessionSpec("s", turns=[Turn("user", 0.5, 1.0, "hi")])
    await write_run(db, [scenario("s")], [spec], run_id="r")
    before = db.read_bytes()
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "presidio_analyzer" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    code, _, err = await cli("redact", "r", "--db", str(db), "--in-place")
    assert code == 1 and "pip install 'vae[redact]'" in err
    assert db.read_bytes() == before


async def test_option_misuse_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = await cli("import", "calls", str(tmp_path), "--redact-config", "x.yaml",
                             "--db", str(tmp_path / "v.db"))  # fmt: skip
    assert code == 2 and "--redact-config needs --redact" in err
    code, _, err = await cli("redact", "r", "--db", str(tmp_path / "v.db"), "--redact-config",
                             str(tmp_path / "missing.yaml"), "--in-place")  # fmt: skip
    assert code == 2 and "no such file" in err
    assert not (tmp_path / "v.db").exists()


async def test_schema_redaction_is_the_schema() -> None:
    code, out, _ = await cli("schema", "redaction")
    assert code == 0
    doc = json.loads(out)
    assert doc == SCHEMA
    jsonschema.Draft202012Validator.check_schema(doc)
    code, out, _ = await cli("redact", "--help")
    assert code == 0 and "Examples:" in out and "--in-place" in out
