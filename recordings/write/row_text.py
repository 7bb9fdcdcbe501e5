"""How a row's values become text the store can hold, the same for every write.

Every layer of writes encodes its JSON columns through :func:`dumps`, so a
column reads back alike whichever writer wrote it. Text is stored as valid
Unicode whatever a bot sent: a lone surrogate (which JSON's ``\\ud800``
escape decodes to, from a connector's socket or a bot's file) cannot be
encoded as UTF-8 and would fail the whole batch it is in, so the single
writer (:mod:`vae.recordings.write.batch_writer`) passes every row through
:func:`clean_row`, which replaces it with U+FFFD before the row is queued.
Kept apart from the writer's queue: this changes with what the store accepts
as text, not with how rows are batched and committed.
"""

from __future__ import annotations

import json

from vae.recordings.backends.writer_conn import Row

__all__ = ["clean_row", "clean_text", "dumps"]


def dumps(value: object) -> str:
    """A JSON column's text: compact, UTF-8 kept, anything else as ``str``."""
    return clean_text(json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str))


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (pairs are joined)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def clean_row(row: Row) -> Row:
    """``row`` with its text made storable (see the module docstring)."""
    if any(isinstance(v, str) and not v.isascii() for v in row):
        return tuple(clean_text(v) if isinstance(v, str) else v for v in row)
    return row
