"""Reading and writing the ``labels`` table (migration ``0010_labels``).

Labels are only ever added: a new label by the same person on the same item
replaces theirs *when read* (:func:`latest_per_labeller`), never in the table.
Adding a label that is already there — same session, item, labeller and time,
as when one export is imported twice — does nothing (``ON CONFLICT DO
NOTHING`` on the ``labels_once`` index). The SQL is portable (no SQLite-only
syntax), so a PostgreSQL back end can run it unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vae.recordings.backends.dialect import StoreConnection
from vae.recordings.labels import LabelKind, LabelRecord, LabelVerdict
from vae.recordings.write.batch_writer import BatchWriter

_COLS = (
    "id, run_id, session_id, kind, signal, assertion, assertion_text, verdict, note, labeller,"
    " created_ns"
)


def _label(r: tuple[Any, ...]) -> LabelRecord:
    return LabelRecord(
        id=r[0],
        run_id=r[1],
        session_id=r[2],
        kind=LabelKind(r[3]),
        signal=r[4],
        assertion=r[5],
        assertion_text=r[6],
        verdict=LabelVerdict(r[7]),
        note=r[8],
        labeller=r[9],
        created_ns=r[10],
    )


class LabelReader:
    """Queries over the labels of one store file (a base of ``RecordingReader``)."""

    conn: StoreConnection

    def labels(
        self, run_id: str, *, session_id: str | None = None, labeller: str | None = None
    ) -> list[LabelRecord]:
        """Every label of a run (oldest first), optionally of one session or one labeller."""
        sql = f"SELECT {_COLS} FROM labels WHERE run_id = ?"
        params: list[Any] = [run_id]
        if session_id is not None:
            sql += " AND session_id = ?"
            params.append(session_id)
        if labeller is not None:
            sql += " AND labeller = ?"
            params.append(labeller)
        sql += " ORDER BY created_ns, id"
        return [_label(r) for r in self.conn.execute(sql, params).fetchall()]

    def labelled_runs(self) -> list[str]:
        """Run ids that hold at least one label."""
        rows = self.conn.execute("SELECT DISTINCT run_id FROM labels ORDER BY run_id").fetchall()
        return [r[0] for r in rows]


_INSERT = (
    "INSERT INTO labels (run_id, session_id, kind, signal, assertion, assertion_text, verdict,"
    " note, labeller, created_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (session_id, kind, signal, assertion, labeller, created_ns) DO NOTHING"
)


class LabelWriter(BatchWriter):
    """Adding labels through the file's single writer."""

    async def add_labels(self, labels: Sequence[LabelRecord]) -> None:
        await self.executemany(
            _INSERT,
            [
                (
                    x.run_id,
                    x.session_id,
                    str(x.kind),
                    x.signal,
                    x.assertion,
                    x.assertion_text,
                    str(x.verdict),
                    x.note,
                    x.labeller,
                    x.created_ns,
                )
                for x in labels
            ],
        )


def latest_per_labeller(labels: Sequence[LabelRecord]) -> dict[tuple[str, str, str], LabelRecord]:
    """Each labeller's latest label per item: ``(session_id, item, labeller) -> label``."""
    out: dict[tuple[str, str, str], LabelRecord] = {}
    for x in sorted(labels, key=lambda x: (x.created_ns, x.id or 0)):
        out[(x.session_id, x.item, x.labeller)] = x
    return out
