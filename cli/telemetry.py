"""OpenTelemetry and cost options shared by ``vae`` commands, and vae's trace sent.

- ``--otel-endpoint URL`` (env ``VAE_OTEL_ENDPOINT``): export vae's trace to an
  OTLP/HTTP collector (a base URL; ``/v1/traces`` is appended); without it the
  standard ``OTEL_EXPORTER_OTLP_*`` variables decide (docs/traces.md);
- ``--otlp-receiver HOST:PORT`` (env ``VAE_OTLP_RECEIVER``): receive the agent's
  traces (the bridge serves it);
- ``--prices FILE`` (env ``VAE_PRICES``): the price table costs are computed with.

A malformed value is a usage error (exit 2) naming the option; a missing
``otel`` extra names ``pip install 'vae[otel]'``. Exporting never fails a
command: it is bounded to 2 s and logs one WARNING line when spans are lost,
whose count is recorded with the run (``vae runs show --json``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator

F = TypeVar("F", bound=Callable[..., Any])


def _endpoint(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """The traces URL to export to, or None (export off)."""
    from vae.otel.endpoint import resolve

    try:
        url = resolve(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--otel-endpoint") from None
    return url


def require_otel(what: str) -> None:
    """A usage error (exit 2) naming the extra when this process must speak OTLP and cannot."""
    from vae.otel import OtelMissingError, require

    try:
        require()
    except OtelMissingError as exc:
        raise click.UsageError(f"{what}: {exc}") from None


def _receiver(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    if not value:
        return ""
    from vae.otel.address import parse_hostport

    try:
        parse_hostport(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--otlp-receiver") from None
    return value


def _prices(ctx: click.Context, param: click.Parameter, value: Path | None) -> Any:
    if value is None:
        return None
    from vae.recordings.cost.prices import PriceFileError, load

    try:
        return load(value)
    except PriceFileError as exc:
        raise click.BadParameter(str(exc), param_hint="--prices") from None


otel_endpoint_option = click.option(
    "--otel-endpoint",
    envvar="VAE_OTEL_ENDPOINT",
    default=None,
    callback=_endpoint,
    metavar="URL",
    help="Export vae's trace over OTLP/HTTP to this base URL (/v1/traces appended); "
    "default: the OTEL_EXPORTER_OTLP_* variables, else off (env VAE_OTEL_ENDPOINT).",
)
otlp_receiver_option = click.option(
    "--otlp-receiver",
    envvar="VAE_OTLP_RECEIVER",
    default=None,
    callback=_receiver,
    metavar="HOST:PORT",
    help="Receive the agent's OpenTelemetry traces (OTLP/HTTP POST /v1/traces) here and tie "
    "each span to its session (env VAE_OTLP_RECEIVER).",
)
prices_option = click.option(
    "--prices",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    envvar="VAE_PRICES",
    callback=_prices,
    metavar="FILE",
    help="A TOML price table (docs/traces.md): show what each call cost (env VAE_PRICES).",
)


async def export_trace_async(
    db: Locator,
    run_id: str,
    endpoint: str,
    *,
    verdicts: dict[str, str] | None = None,
    scoring_id: str = "",
    with_run: bool = True,
) -> dict[str, Any]:
    """Send the run's trace (with ``verdicts``) and/or a scoring's, then record the counts.

    Never raises for the collector; returns what the export did.
    """
    from vae.otel.export import export, warn_once
    from vae.recordings.write.trace_rows import add_otel_export
    from vae.recordings.write.writer import open_writer

    spans = await asyncio.to_thread(_spans, db, run_id, verdicts, scoring_id, with_run)
    result = await asyncio.to_thread(export, spans, endpoint)
    warn_once(result, f"run {run_id}" + (f" (scoring {scoring_id})" if scoring_id else ""))
    async with open_writer(db) as writer:
        await add_otel_export(writer, run_id, scoring_id, result.to_dict())
    return result.to_dict()


def export_trace(db: Locator, run_id: str, endpoint: str, **kw: Any) -> dict[str, Any]:
    """:func:`export_trace_async` from a command (no event loop running)."""
    return asyncio.run(export_trace_async(db, run_id, endpoint, **kw))


def _spans(
    db: Locator, run_id: str, verdicts: dict[str, str] | None, scoring_id: str, with_run: bool
) -> list[Any]:
    from vae.recordings.read.reader import RecordingReader
    from vae.recordings.read.trace_reads import run_spans, scoring_spans

    with RecordingReader(db) as reader:
        spans: list[Any] = run_spans(reader, run_id, verdicts) if with_run else []
        if scoring_id:
            spans += scoring_spans(reader, scoring_id)
    return spans


def export_scoring(db: Locator, run_id: str, scoring_id: str, endpoint: str) -> dict[str, Any]:
    """A scoring's spans (``vae rescore --otel-endpoint``), with the run's own spans unless
    they already reached this endpoint (so a collector never holds them twice)."""
    from vae.recordings.read.reader import RecordingReader
    from vae.recordings.read.trace_reads import otel_exports

    require_otel("--otel-endpoint")
    with RecordingReader(db) as reader:
        sent = any(
            e["endpoint"] == endpoint and not e["scoring_id"] and e["dropped"] < e["spans"]
            for e in otel_exports(reader, run_id)
        )
    return export_trace(db, run_id, endpoint, scoring_id=scoring_id, with_run=not sent)


def session_verdicts(db: Locator, scoring_id: str) -> dict[str, str]:
    """Each scored session's overall verdict (``is_successful``) in a scoring."""
    from vae.recordings.read.reader import RecordingReader

    with RecordingReader(db) as reader:
        return {
            s.session_id: str(s.verdict)
            for s in reader.scores(scoring_id)
            if s.signal == "is_successful"
        }
