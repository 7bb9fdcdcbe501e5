"""Run-level facts from the framework's ``run_args.json``: when the run started, its options.

Kept apart from ``nemo.py`` so the importer's flow stays readable; only the
options the scorer reads are taken, each type-checked.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from vae.recordings.importers.nemo.files import parse_time_ns
from vae.recordings.importers.nemo.session import dumps


def invocations(run_args: Any) -> list[dict[str, Any]]:
    items = run_args.get("invocations") if isinstance(run_args, dict) else None
    return [i for i in items or [] if isinstance(i, dict)]


def created_ns(run_args: Any) -> int:
    for inv in invocations(run_args):
        when = parse_time_ns(inv.get("started_at"))
        if when is not None:
            return when
    return time.time_ns()


def options(run_args: Any, root: Path) -> dict[str, Any]:
    """Run options the scorer reads, from the last invocation's parsed arguments."""
    found: dict[str, Any] = {"end_policy": "tool-only", "imported_from": str(root)}
    runs = invocations(run_args)
    parsed = runs[-1].get("parsed_args") if runs else None
    if isinstance(parsed, dict):
        if isinstance(parsed.get("strict_match"), bool):
            found["strict_match"] = parsed["strict_match"]
        if isinstance(parsed.get("min_agent_turns"), int):
            found["min_agent_turns"] = parsed["min_agent_turns"]
        if isinstance(parsed.get("duration"), int | float):
            found["max_duration_s"] = parsed["duration"]
        found["nemo_args"] = json.loads(dumps(parsed))
    return found
