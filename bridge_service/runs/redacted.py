"""A run recorded redacted (``vae run --redact``): the writer told before the run's first row.

The bridge only says which runs to redact and with which configuration; the
store's writer does the rest (:mod:`vae.recordings.redact.live`): texts with
placeholders, audio held per session and written masked when it ends. The
run is registered where its rows are written — by the run manager before the
run's row, and by each attempt before its session's row (an attempt served
by a worker process, or a resumed run, has a writer of its own) — with one
redactor per configuration per process (building one loads presidio's
recognisers, about a second).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from vae.bridge_service.config import RunSettings
from vae.recordings.redact.live import redact_as_written
from vae.recordings.write.writer import RecordingWriter


@functools.lru_cache(maxsize=4)
def _redactor(config_json: str) -> Any:
    from vae.redaction.config import RedactionUnavailable, config_from_dict
    from vae.redaction.redactor import make_redactor

    try:
        return make_redactor(config_from_dict(json.loads(config_json)))
    except RedactionUnavailable as exc:
        raise ValueError(f"options.redaction_json: {exc}") from None


def redact_if_asked(writer: RecordingWriter, run_id: str, settings: RunSettings) -> None:
    """Have ``writer`` redact ``run_id`` 's rows when the run asks for it (ValueError: cannot)."""
    if settings.redaction is None:
        return
    redactor = _redactor(json.dumps(settings.redaction, sort_keys=True))
    redact_as_written(writer, run_id, redactor, mode="record")
