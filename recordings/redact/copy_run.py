"""Copying one run's rows from a store into another, redacted on the way.

Each table of :data:`~vae.recordings.redact.tables.RUN_TABLES` is read by its
scope and written column by column as the table says: ``text`` and ``json``
columns through the redaction (each finding a ledger entry naming the table,
column and JSON path), final states' hashes recomputed, and each session's
audio masked from the spoken units of its transcripts — its events' and the
transcription stage's (:mod:`vae.recordings.redact.session_mask`). Sessions
are copied one at a time, so memory holds one session's audio at most.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from vae.recordings.backends.dialect import StoreConnection
from vae.recordings.canonical import state_hash
from vae.recordings.models import (
    Channel,
    EventKind,
    EventRecord,
    SegmentRecord,
    Side,
    TranscriptRecord,
)
from vae.recordings.redact.model import LedgerEntry, Redaction
from vae.recordings.redact.session_mask import (
    SpokenUnit,
    mask_session,
    redact_words,
    unit_of_event,
    unit_of_transcript,
)
from vae.recordings.redact.tables import RUN_TABLES, Table, where

_BY_NAME = {t.name: t for t in RUN_TABLES}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class RunCopier:
    """Copies run ``run_id`` from ``reader`` into ``writer`` (inside the caller's transaction)."""

    def __init__(
        self,
        reader: StoreConnection,
        writer: StoreConnection,
        run_id: str,
        redaction: Redaction,
        mode: str = "copy",
    ) -> None:
        self.mode = mode
        self.reader, self.writer = reader, writer
        self.run_id = run_id
        self.redaction = redaction
        self.ledger: list[LedgerEntry] = []
        self._started: dict[str, int] = {}
        self._units: dict[str, list[SpokenUnit]] = defaultdict(list)

    def copy(self) -> None:
        for table in RUN_TABLES:
            if table.name == "audio_segments":
                continue  # after every unit of every session is known (events, transcripts)
            self._table(table)
        self._audio()

    def _select(self, table: Table, extra: str = "", params: tuple[Any, ...] = ()) -> list[Any]:
        cols = ", ".join(table.columns)
        order = " ORDER BY id" if "id" in table.columns else ""
        sql = f"SELECT {cols} FROM {table.name} WHERE {where(table)}{extra}{order}"
        return list(self.reader.execute(sql, (self.run_id, *params)).fetchall())

    def _insert(self, table: Table, rows: list[dict[str, Any]]) -> None:
        cols = table.stored
        sql = (f"INSERT INTO {table.name} ({', '.join(cols)})"
               f" VALUES ({', '.join('?' * len(cols))})")  # fmt: skip
        for row in rows:
            self.writer.execute(sql, tuple(row[c] for c in cols))

    def _table(self, table: Table) -> None:
        out = []
        for raw in self._select(table):
            row = dict(zip(table.columns, raw, strict=True))
            if table.name == "sessions":
                self._started[row["session_id"]] = int(row["started_ns"])
            at_s = None
            if table.name == "events":
                at_s = (row["bridge_ns"] - self._started.get(row["session_id"], 0)) / 1e9
                self._event_units(row)
            if table.name == "transcripts":
                self._transcript_unit(row)
            for col, kind in table.columns.items():
                if row[col] is None:
                    continue
                where_ = f"{table.name}.{col}"
                if kind == "text":
                    row[col] = self._text(row, where_, str(row[col]), at_s)
                elif kind == "json":
                    row[col] = self._json(row, where_, row[col], at_s)
            if table.name == "runs":
                # The run says it is redacted (the scorer's verdicts then say what they compared).
                options = json.loads(row["options_json"])
                options["redacted"] = {"mode": self.mode, **self.redaction.describe()}
                row["options_json"] = _dumps(options)
            if table.name == "scorings":
                # Judged before the redaction: its reasons are redacted now, its verdicts not.
                summary = json.loads(row["summary_json"] or "{}")
                summary.setdefault("redaction", {"judged_on_redacted_text": False,
                                                 "stored_text_redacted": True})  # fmt: skip
                row["summary_json"] = _dumps(summary)
            if table.name == "final_states" and row.get("state_json") is not None:
                row["state_hash"] = state_hash(json.loads(row["state_json"]))
            out.append(row)
        self._insert(table, out)

    def _entry(self, row: dict[str, Any], location: str, entity: str, at_s: float | None) -> None:
        self.ledger.append(LedgerEntry(self.run_id, row.get("session_id"), location, entity,
                                       "", at_s, at_s))  # fmt: skip

    def _text(self, row: dict[str, Any], location: str, text: str, at_s: float | None) -> str:
        out, found = self.redaction.text(text)
        for f in found:
            self._entry(row, location, f.entity, at_s)
        return out

    def _json(self, row: dict[str, Any], location: str, text: str, at_s: float | None) -> str:
        try:
            doc = json.loads(text)
        except (TypeError, ValueError):
            return self._text(row, location, str(text), at_s)
        out, found = self.redaction.value(doc, "$")
        for path, entity in found:
            self._entry(row, f"{location}{path[1:]}", entity, at_s)
        words = doc.get("words") if isinstance(doc, dict) else None
        if location == "events.payload_json" and isinstance(words, list) and isinstance(out, dict):
            text = str(doc.get("text", ""))
            out["words"] = redact_words(self.redaction, text, words, out["words"])
        return _dumps(out)

    def _event_units(self, row: dict[str, Any]) -> None:
        try:
            payload = json.loads(row["payload_json"])
            event = EventRecord(row["session_id"], Side(row["side"]), EventKind(row["kind"]),
                                row["bridge_ns"], payload, row["bot_ns"])  # fmt: skip
        except (ValueError, TypeError):
            return
        unit = unit_of_event(event, self._started.get(row["session_id"], 0), self.redaction)
        if unit is not None:
            self._units[row["session_id"]].append(unit)

    def _transcript_unit(self, row: dict[str, Any]) -> None:
        record = TranscriptRecord(
            row["scoring_id"], row["session_id"], row["channel"], row["turn"], row["start_s"],
            row["end_s"], row["text"] or "",
        )  # fmt: skip
        unit = unit_of_transcript(record, self.redaction)
        if unit is not None:
            self._units[row["session_id"]].append(unit)

    def _audio(self) -> None:
        table = _BY_NAME["audio_segments"]
        for session_id, started in self._started.items():
            rows = self._select(table, " AND session_id = ?", (session_id,))
            by_channel: dict[str, list[SegmentRecord]] = defaultdict(list)
            for r in sorted(rows, key=lambda r: (r[1], r[2])):
                seg = SegmentRecord(r[0], Channel(r[1]), r[2], r[3], r[4], r[5], r[6],
                                    bytes(r[8]), bytes(r[7]))  # fmt: skip
                by_channel[str(seg.channel)].append(seg)
            units = self._units.get(session_id, [])
            masked, entries = mask_session(
                self.redaction, self.run_id, session_id, started, dict(by_channel), units
            )
            self.ledger += entries
            self._insert(table, [
                {"session_id": s.session_id, "channel": str(s.channel), "seq": s.seq,
                 "start_offset": s.start_offset, "sample_count": s.sample_count,
                 "sample_rate": s.sample_rate, "first_arrival_ns": s.first_arrival_ns,
                 "frames": s.frames, "pcm": s.pcm}
                for s in masked
            ])  # fmt: skip
