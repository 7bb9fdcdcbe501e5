"""Run reports (owned by the reports work item).

Interface the scorer's GetReport relies on:

- ``report_data(reader, run_id, scoring_id=None, compare_scoring_id=None) -> dict``
- ``render_html(reader, run_id, scoring_id=None, compare_scoring_id=None) -> str``
"""

from __future__ import annotations

from typing import Any

from recordings.reader import RecordingReader


def report_data(
    reader: RecordingReader,
    run_id: str,
    scoring_id: str | None = None,
    compare_scoring_id: str | None = None,
) -> dict[str, Any]:
    raise NotImplementedError("report_data is being built")


def render_html(
    reader: RecordingReader,
    run_id: str,
    scoring_id: str | None = None,
    compare_scoring_id: str | None = None,
) -> str:
    raise NotImplementedError("render_html is being built")
