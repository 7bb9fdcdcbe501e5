"""A run's trace, built from the store when the run ends, sent and accounted for.

Runs off the event loop (reading sessions and finding turns in their audio,
then the exporter's thread), bounded by the exporter's deadline; the result
(spans sent, dropped, why) is recorded with the run for ``vae runs show``.
"""

from __future__ import annotations

import asyncio
import logging

from vae.otel.export import ExportResult, export, warn_once
from vae.recordings.backends.locator import Locator
from vae.recordings.errors import StoreError
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.trace_reads import run_spans
from vae.recordings.traces.outgoing import TraceSpan
from vae.recordings.write.trace_rows import add_otel_export
from vae.recordings.write.writer import RecordingWriter

log = logging.getLogger("vae.bridge.traces")


def _spans(db: Locator, run_id: str) -> list[TraceSpan]:
    with RecordingReader(db) as reader:
        return run_spans(reader, run_id)


async def export_run(
    writer: RecordingWriter, db: Locator, run_id: str, endpoint: str
) -> ExportResult | None:
    """Export the run's trace to ``endpoint``; never raises for the collector or the store."""
    try:
        await writer.flush()
        spans = await asyncio.to_thread(_spans, db, run_id)
        result = await asyncio.to_thread(export, spans, endpoint)
    except (StoreError, OSError) as exc:
        log.warning("OpenTelemetry: run %s was not exported: %s", run_id, exc)
        return None
    warn_once(result, f"run {run_id}")
    try:
        await add_otel_export(writer, run_id, "", result.to_dict())
    except StoreError as exc:
        log.warning("OpenTelemetry: the export of run %s was not recorded: %s", run_id, exc)
    return result
