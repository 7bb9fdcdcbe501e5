"""The store: one SQLite file (or a PostgreSQL database) holding runs,
sessions, audio, events, final states, scorings and scores.

Uses only the standard library, numpy, soundfile and aiosqlite, and psycopg
for a ``postgresql://`` store: no protobuf, no service code. A store is
named by a locator (:func:`~vae.recordings.backends.locator.locate`: a path
or a URL). Write through :func:`open_writer` (one writer per store per
process); read with :class:`RecordingReader`. Subpackages: ``backends`` (the
store seam), ``write``, ``read``, ``scenarios`` (the scenario format) and
``importers`` and ``redact`` (personal data kept out: a run redacted as it
is written, or rewritten redacted), ``traces`` (trace ids, the agent's spans, vae's
own trace) and ``cost`` (usage and a user's price table); the records every layer
shares sit at the top.

Layers, bottom to top (a unit imports only from its own layer or below;
``tests/test_import_direction.py`` holds the code to this list):

1. models, errors, identifiers, canonical, stop_reasons, trials, labels, vad, audio, traces, cost
2. backends
3. write, scenarios
4. read
5. redact
6. importers
"""

from vae.recordings.errors import (
    AmbiguousRunError,
    RunNotFoundError,
    RunSelectionError,
    ScenarioError,
    SchemaError,
    SchemaTooNewError,
    StoreError,
    WriterClosedError,
)
from vae.recordings.models import (
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
from vae.recordings.read.reader import ChannelAudio, RecordingReader
from vae.recordings.write.writer import RecordingWriter, open_writer

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
