"""The seam through which a writer redacts what it writes: nothing personal reaches disk.

Why in the writer: a run recorded with ``vae run --redact`` (and a call imported
with ``vae import calls --redact``) must never put a card number on disk, not
even for the second before a later pass would remove it; and every row of a
recording goes through the store's one writer per file. So the writer asks a
:class:`WriteFilter` (when it has one) to redact the rows of the runs it was
told about before they are queued: texts and JSON documents get placeholders,
audio segments are held back until their session ends and then masked where
its transcripts found personal data. Rows of other runs pass untouched.

The implementation is :class:`vae.recordings.redact.live.PrivacyFilter`; this
module only names what the writer calls, so the writing layer needs nothing
above it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from vae.recordings.models import (
    ArtifactRecord,
    EventRecord,
    FinalStateRecord,
    RunRecord,
    RunScenario,
    SegmentRecord,
    SessionRecord,
)


class WriteFilter(Protocol):
    def covers_run(self, run_id: str) -> bool: ...

    def covers(self, session_id: str) -> bool: ...

    async def run(self, run: RunRecord) -> RunRecord: ...

    async def scenarios(self, scenarios: Sequence[RunScenario]) -> list[RunScenario]: ...

    async def session(self, session: SessionRecord) -> SessionRecord: ...

    async def text(self, session_id: str, location: str, text: str) -> str: ...

    async def document(self, session_id: str, location: str, value: object) -> object: ...

    async def events(self, events: Sequence[EventRecord]) -> list[EventRecord]: ...

    async def final_state(self, state: FinalStateRecord) -> FinalStateRecord: ...

    async def artifact(self, artifact: ArtifactRecord) -> ArtifactRecord: ...

    def hold(self, segment: SegmentRecord) -> bool:
        """Keep ``segment`` until its session ends (True), or let it be written (False)."""

    async def release(self, session_id: str) -> list[SegmentRecord]:
        """The session's held segments, masked (its ledger rows are written by then)."""
