"""Label files: ``vae labels import`` and ``vae labels export`` (CSV or JSONL).

Why a format of its own: labels are often made elsewhere — a spreadsheet, an
annotation tool, a colleague's export — and a file is how they travel. The
format (documented for users in docs/scoring.md, "Labels") has one row per
label and these columns (JSONL: keys), in any order:

``run``, ``session``, ``scenario``, ``signal``, ``assertion``,
``assertion_text``, ``verdict``, ``note``, ``by``, ``at``

``verdict`` is required; so is ``session`` (a session id) or ``scenario``
(its latest attempt), and ``run`` unless the import names one. Empty
``signal`` and ``assertion`` label the session as a whole. ``at`` is ISO 8601
with a time zone (``2026-12-04T11:08:05.123456789Z``; empty: the time of the
import) and ``by`` the labeller (empty: the importer's ``--by``).

An import is all or nothing: every row is checked against the store before
anything is written, and one bad row refuses the whole file, with the line of
each problem. Exporting then importing into the same store adds nothing
(each label is identified by session, item, labeller and time to the
nanosecond).
"""

from __future__ import annotations

import csv
import json
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from vae.recordings.errors import RunSelectionError, StoreError
from vae.recordings.labels import LabelError, LabelKind, LabelRecord
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.selection import select_run
from vae.scorer_service.labels.labelling import make_label

COLUMNS = (
    "run", "session", "scenario", "signal", "assertion", "assertion_text", "verdict", "note",
    "by", "at",
)  # fmt: skip
FORMATS = ("csv", "jsonl")
_ISO = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$"
)


class LabelFileError(StoreError, ValueError):
    """A label file refused whole: ``problems`` lists ``(line, message)``."""

    def __init__(self, path: Path, problems: list[tuple[int, str]]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f"{path}: {len(problems)} problem(s); nothing was imported")


def iso_ns(ns: int) -> str:
    """``2026-12-04T11:08:05.123456789Z`` (UTC, every nanosecond kept)."""
    seconds, frac = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{frac:09d}Z"


def parse_iso_ns(text: str) -> int:
    """Unix nanoseconds of an ISO 8601 time with a zone; :class:`LabelError` otherwise."""
    import calendar

    m = _ISO.match(text.strip())
    if m is None:
        raise LabelError(
            f"at: {text!r} is not an ISO 8601 time with a zone (e.g. 2026-12-04T11:08:05Z)"
        )
    date, clock, frac, zone = m.groups()
    try:
        parsed = time.strptime(f"{date}T{clock}", "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        raise LabelError(f"at: {text!r} is not a valid date and time") from None
    offset = 0
    if zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        offset = sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    seconds = calendar.timegm(parsed) - offset
    return seconds * 1_000_000_000 + int((frac or "0").ljust(9, "0"))


def file_format(path: Path, fmt: str | None) -> str:
    if fmt:
        return fmt
    suffix = path.suffix.lower().lstrip(".")
    if suffix in ("jsonl", "ndjson"):
        return "jsonl"
    if suffix == "csv":
        return "csv"
    raise LabelError(f"{path}: name ends in neither .csv nor .jsonl: give --format csv or jsonl")


@dataclass
class _Row:
    line: int
    values: dict[str, Any]


def _csv_rows(text: TextIO, problems: list[tuple[int, str]]) -> Iterator[_Row]:
    reader = csv.reader(text)
    header = next(reader, None)
    if header is None:
        problems.append((1, "the file is empty (expected a header line)"))
        return
    names = [h.strip().lower() for h in header]
    unknown = [n for n in names if n not in COLUMNS]
    if unknown or len(set(names)) != len(names):
        what = f"unknown column {unknown[0]!r}" if unknown else "a column is named twice"
        problems.append((1, f"{what} (columns: {', '.join(COLUMNS)})"))
        return
    start = reader.line_num + 1
    for fields in reader:
        line, start = start, reader.line_num + 1
        if not fields or fields == [""]:
            continue
        if len(fields) != len(names):
            problems.append((line, f"{len(fields)} fields, the header has {len(names)}"))
            continue
        yield _Row(line, {n: v for n, v in zip(names, fields, strict=True) if v != ""})


def _jsonl_rows(text: TextIO, problems: list[tuple[int, str]]) -> Iterator[_Row]:
    for line, raw in enumerate(text, start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append((line, f"not JSON: {exc.msg}"))
            continue
        if not isinstance(value, dict):
            problems.append((line, "expected a JSON object"))
            continue
        unknown = sorted(set(value) - set(COLUMNS))
        if unknown:
            problems.append((line, f"unknown key {unknown[0]!r} (keys: {', '.join(COLUMNS)})"))
            continue
        yield _Row(line, {k: v for k, v in value.items() if v not in (None, "")})


def _assertion(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    raise LabelError(f"assertion: {value!r} is not an assertion index (0, 1, …)")


def _text(values: dict[str, Any], key: str) -> str:
    value = values.get(key, "")
    if not isinstance(value, str):
        raise LabelError(f"{key}: must be text, got {type(value).__name__}")
    return value


def _label(
    reader: RecordingReader, row: _Row, run: str | None, by: str | None, now_ns: int
) -> LabelRecord:
    v = row.values
    run_ref = _text(v, "run") or run
    if not run_ref:
        raise LabelError("run: missing (add a run column or pass --run)")
    try:
        run_id = select_run(reader, run_ref)
    except RunSelectionError as exc:
        raise LabelError(f"run: {exc}") from None
    if run and run_id != select_run(reader, run):
        raise LabelError(f"run: {run_id} is not the run given with --run ({run})")
    session, scenario = _text(v, "session"), _text(v, "scenario")
    if not session and not scenario:
        raise LabelError("session: give a session id or a scenario name")
    label = make_label(
        reader, run_id, session or scenario, v.get("verdict"),
        signal=_text(v, "signal") or None, assertion=_assertion(v.get("assertion")),
        assertion_text=_text(v, "assertion_text"), note=_text(v, "note"),
        by=_text(v, "by") or by,
        at_ns=parse_iso_ns(_text(v, "at")) if v.get("at") else now_ns + row.line,
    )  # fmt: skip
    found = reader.session(label.session_id) if session and scenario else None
    if found is not None and found.scenario_name != scenario:
        raise LabelError(
            f"scenario: session {session} is of scenario {found.scenario_name}, not {scenario}"
        )
    return label


def read_labels(
    reader: RecordingReader,
    path: Path,
    fmt: str | None = None,
    *,
    run: str | None = None,
    by: str | None = None,
) -> list[LabelRecord]:
    """Every label of ``path``, checked; :class:`LabelFileError` lists each bad line."""
    kind = file_format(path, fmt)
    problems: list[tuple[int, str]] = []
    labels: list[LabelRecord] = []
    now_ns = time.time_ns()
    try:
        with path.open(encoding="utf-8-sig", newline="") as text:
            rows = _csv_rows(text, problems) if kind == "csv" else _jsonl_rows(text, problems)
            for row in rows:
                try:
                    labels.append(_label(reader, row, run, by, now_ns))
                except LabelError as exc:
                    problems.append((row.line, str(exc)))
    except UnicodeDecodeError as exc:
        problems.append((0, f"not UTF-8 text: {exc.reason}"))
    except csv.Error as exc:
        problems.append((0, f"not valid CSV: {exc}"))
    if problems:
        raise LabelFileError(path, sorted(problems))
    return labels


def label_rows(reader: RecordingReader, labels: Sequence[LabelRecord]) -> list[dict[str, Any]]:
    """The export's rows, one per label, with every column."""
    names = {s.session_id: s.scenario_name for r in {x.run_id for x in labels}
             for s in reader.sessions(r)}  # fmt: skip
    return [
        {"run": x.run_id, "session": x.session_id, "scenario": names.get(x.session_id, ""),
         "signal": x.signal or None,
         "assertion": x.assertion if x.kind is LabelKind.ASSERTION else None,
         "assertion_text": x.assertion_text or None, "verdict": str(x.verdict),
         "note": x.note, "by": x.labeller, "at": iso_ns(x.created_ns)}
        for x in labels
    ]  # fmt: skip


def write_labels(rows: list[dict[str, Any]], out: TextIO, fmt: str) -> None:
    if fmt == "jsonl":
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow(["" if row[c] is None else row[c] for c in COLUMNS])
