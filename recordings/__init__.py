"""The store: one SQLite file (or a PostgreSQL database) holding runs,
sessions, audio, events, final states, scorings and scores.

Uses only the standard library, numpy, soundfile and aiosqlite, and psycopg
for a ``postgresql://`` store (README, "Layout"): no protobuf, no service
code. A store is named by a locator (:func:`~recordings.locator.locate`: a
path or a URL). Write through :func:`open_writer` (one writer per store per
process); read with :class:`RecordingReader`.
"""

from recordings.errors import (
    AmbiguousRunError,
    RunNotFoundError,
    RunSelectionError,
    ScenarioError,
    SchemaError,
    SchemaTooNewError,
    StoreError,
    WriterClosedError,
)
from recordings.models import (
    ArtifactRecord,
    Channel,
    EventKind,
    EventRecord,
    FinalStateRecord,
    RunRecord,
    RunScenario,
    RunStatus,
    ScoreRecord,
    ScoringRecord,
    SegmentRecord,
    SessionRecord,
    SessionStatus,
    Side,
    Verdict,
)
from recordings.reader import ChannelAudio, RecordingReader
from recordings.writer import RecordingWriter, open_writer

__all__ = [
    "AmbiguousRunError",
    "ArtifactRecord",
    "Channel",
    "ChannelAudio",
    "EventKind",
    "EventRecord",
    "FinalStateRecord",
    "RecordingReader",
    "RecordingWriter",
    "RunNotFoundError",
    "RunRecord",
    "RunScenario",
    "RunSelectionError",
    "RunStatus",
    "ScenarioError",
    "SchemaError",
    "SchemaTooNewError",
    "ScoreRecord",
    "ScoringRecord",
    "SegmentRecord",
    "SessionRecord",
    "SessionStatus",
    "Side",
    "StoreError",
    "Verdict",
    "WriterClosedError",
    "open_writer",
]
