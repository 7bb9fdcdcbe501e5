"""Run reports: one self-contained HTML file per run (and the data behind it).

Interface the scorer's GetReport relies on:

- ``report_data(reader, run_id, scoring_id=None, compare_scoring_id=None) -> dict``
- ``render_html(reader, run_id, scoring_id=None, compare_scoring_id=None) -> str``

``run_id`` may be an exact run id or a unique prefix; without ``scoring_id``
the run's current scoring is shown; with ``compare_scoring_id`` the report
adds a diff view from that scoring to the shown one.
"""

from __future__ import annotations

from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.report.data import report_data
from vae.scorer_service.report.html import render

__all__ = ["render_html", "report_data"]


def render_html(
    reader: RecordingReader,
    run_id: str,
    scoring_id: str | None = None,
    compare_scoring_id: str | None = None,
) -> str:
    """The report as one HTML document (inline CSS, SVG plots, data: audio)."""
    return render(report_data(reader, run_id, scoring_id, compare_scoring_id))
