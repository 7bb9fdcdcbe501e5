"""What a store already holds before an import writes to it.

An importer asks before it opens the writer (which would create the store):
which run ids are taken, whether this source was imported already. There
may be no store yet — no SQLite file, or a PostgreSQL database without a vae
schema — and then nothing is taken.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from vae.recordings.backends.db_file import DatabaseMissingError
from vae.recordings.backends.locator import StoreRef, locate
from vae.recordings.read.reader import RecordingReader


@contextlib.contextmanager
def existing_reader(store: StoreRef) -> Iterator[RecordingReader | None]:
    """A reader of the store, or None where there is no store yet to read."""
    locator = locate(store)
    if not locator.exists():
        yield None
        return
    try:
        reader = RecordingReader(locator)
    except DatabaseMissingError:
        yield None
        return
    with reader:
        yield reader


def run_ids(store: StoreRef) -> list[str]:
    """The run ids already in the store (none when there is no store yet)."""
    with existing_reader(store) as reader:
        return [] if reader is None else reader.run_ids()
