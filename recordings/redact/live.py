"""Redacting a run as it is written: the writer's filter (``vae run/import calls --redact``).

:func:`redact_as_written` tells a writer that a run is to be redacted; from
then on every row of that run passes through :class:`PrivacyFilter` before it
is queued (:mod:`vae.recordings.write.privacy`):

- texts and JSON documents — the frozen scenario, bot descriptions, event
  payloads (transcripts, tool arguments and results, logs, key presses, state
  deltas), final states and LLM contexts, artifacts, stop details — get
  placeholders, and each finding a ledger row;
- audio segments are held in memory until their session ends, then masked
  where the session's transcripts found personal data
  (:mod:`vae.recordings.redact.session_mask`) and written just before the
  row that ends the session.

The price of "never on disk": a redacted session's audio is durable only once
the session ends (a crash loses that session's audio), and it is held in
memory meanwhile (about 32 KB a second per channel at 16 kHz). Detection runs
in a thread, off the loop that drives the audio clocks.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from vae.recordings.canonical import state_hash
from vae.recordings.models import (
    ArtifactRecord,
    EventRecord,
    FinalStateRecord,
    RunRecord,
    RunScenario,
    SegmentRecord,
    SessionRecord,
)
from vae.recordings.redact.ledger import LEDGER_SQL, PASS_SQL, ledger_rows, pass_row
from vae.recordings.redact.model import LedgerEntry, Redaction
from vae.recordings.redact.session_mask import (
    SpokenUnit,
    mask_session,
    redact_words,
    unit_of_event,
)
from vae.recordings.write.writer import RecordingWriter


@dataclass
class _Run:
    redaction: Redaction
    mode: str


@dataclass
class _Session:
    run_id: str
    started_ns: int
    segments: dict[str, list[SegmentRecord]] = field(default_factory=dict)
    units: list[SpokenUnit] = field(default_factory=list)
    #: Its audio was masked and written (the session ended): nothing is held after.
    released: bool = False


def _mapping(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def redact_as_written(
    writer: RecordingWriter, run_id: str, redaction: Redaction, *, mode: str
) -> None:
    """From now on, ``writer`` redacts every row of ``run_id`` before writing it.

    ``mode`` says how the run came to be redacted (``record``, ``import``) in
    its ``redactions`` row. Call it before the run's first row is written.
    """
    current = writer.privacy
    if not isinstance(current, PrivacyFilter):
        current = PrivacyFilter(writer)
        writer.privacy = current
    current.add_run(run_id, redaction, mode)


class PrivacyFilter:
    """The rows of the registered runs, redacted (see the module docstring)."""

    def __init__(self, writer: RecordingWriter) -> None:
        self.writer = writer
        self.runs: dict[str, _Run] = {}
        self.sessions: dict[str, _Session] = {}

    def add_run(self, run_id: str, redaction: Redaction, mode: str) -> None:
        self.runs.setdefault(run_id, _Run(redaction, mode))

    def covers_run(self, run_id: str) -> bool:
        return run_id in self.runs

    def covers(self, session_id: str) -> bool:
        return session_id in self.sessions

    def _redaction(self, key: str) -> tuple[str, Redaction]:
        run_id = self.sessions[key].run_id if key in self.sessions else key
        return run_id, self.runs[run_id].redaction

    async def _ledger(self, entries: list[LedgerEntry]) -> None:
        if entries:
            await self.writer.executemany(LEDGER_SQL, ledger_rows(entries))

    # ------------------------------------------------------------ run rows
    async def run(self, run: RunRecord) -> RunRecord:
        state = self.runs[run.run_id]
        options, found = await asyncio.to_thread(state.redaction.value, run.options, "$")
        tags, more = await asyncio.to_thread(state.redaction.value, run.tags, "$")
        describe = state.redaction.describe()
        # How the run was redacted (``redaction``, if set, is the run's own option).
        options = {**options, "redacted": {"mode": state.mode, **describe}}
        run = replace(run, options=options, tags=[str(t) for t in tags])
        await self.writer.execute(
            PASS_SQL, pass_row(run.run_id, state.mode, time.time_ns(), describe, {})
        )
        await self._ledger([LedgerEntry(run.run_id, None, f"runs.{w}{p[1:]}", e)
                            for w, hits in (("options_json", found), ("tags_json", more))
                            for p, e in hits])  # fmt: skip
        return run

    async def scenarios(self, scenarios: Sequence[RunScenario]) -> list[RunScenario]:
        out, entries = [], []
        for s in scenarios:
            doc, found = await self._value(s.run_id, s.scenario)
            entries += [LedgerEntry(s.run_id, None, f"run_scenarios.scenario_json{p[1:]}", e)
                        for p, e in found]  # fmt: skip
            out.append(replace(s, scenario=doc))
        await self._ledger(entries)
        return out

    async def _value(self, key: str, value: Any) -> tuple[Any, list[tuple[str, str]]]:
        _, redaction = self._redaction(key)
        return await asyncio.to_thread(redaction.value, value, "$")

    async def text(self, key: str, location: str, text: str) -> str:
        run_id, redaction = self._redaction(key)
        out, found = await asyncio.to_thread(redaction.text, text)
        session = key if key in self.sessions else None
        await self._ledger([LedgerEntry(run_id, session, location, f.entity) for f in found])
        return out

    async def document(self, key: str, location: str, value: object) -> object:
        run_id, _ = self._redaction(key)
        out, found = await self._value(key, value)
        session = key if key in self.sessions else None
        await self._ledger([LedgerEntry(run_id, session, f"{location}{p[1:]}", e)
                            for p, e in found])  # fmt: skip
        return out

    # ------------------------------------------------------------ session rows
    async def session(self, session: SessionRecord) -> SessionRecord:
        self.sessions[session.session_id] = _Session(session.run_id, session.started_ns)
        sid = session.session_id
        user_bot = await self.document(sid, "sessions.user_bot_json", session.user_bot)
        agent_bot = await self.document(sid, "sessions.agent_bot_json", session.agent_bot)
        audio = await self.document(sid, "sessions.audio_json", session.audio)
        retry = await self.text(sid, "sessions.retry_reason", session.retry_reason)
        return replace(session, user_bot=_mapping(user_bot), agent_bot=_mapping(agent_bot),
                       audio=_mapping(audio), retry_reason=retry)  # fmt: skip

    async def events(self, events: Sequence[EventRecord]) -> list[EventRecord]:
        out, entries = [], []
        for e in events:
            state = self.sessions.get(e.session_id)
            if state is None:
                out.append(e)
                continue
            redaction = self.runs[state.run_id].redaction
            payload, found = await asyncio.to_thread(redaction.value, e.payload, "$")
            words = e.payload.get("words")
            if isinstance(words, list) and isinstance(payload, dict):
                payload["words"] = await asyncio.to_thread(
                    redact_words, redaction, str(e.payload.get("text", "")),
                    words, payload["words"],
                )  # fmt: skip
            at_s = round((e.bridge_ns - state.started_ns) / 1e9, 3)
            entries += [LedgerEntry(state.run_id, e.session_id, f"events.{e.kind}{p[1:]}", kind,
                                    "", at_s, at_s) for p, kind in found]  # fmt: skip
            if found:
                unit = await asyncio.to_thread(unit_of_event, e, state.started_ns, redaction)
                if unit is not None:
                    state.units.append(unit)
            out.append(replace(e, payload=payload))
        await self._ledger(entries)
        return out

    async def final_state(self, state: FinalStateRecord) -> FinalStateRecord:
        sid = state.session_id
        doc = await self.document(sid, "final_states.state_json", state.state)
        context = await self.document(sid, "final_states.context_json", state.context)
        digest = None if doc is None else await asyncio.to_thread(state_hash, doc)
        return replace(state, state=doc, context=context, state_hash=digest)

    async def artifact(self, artifact: ArtifactRecord) -> ArtifactRecord:
        key = artifact.session_id if artifact.session_id in self.sessions else artifact.run_id
        content = await self.text(key or artifact.run_id, "artifacts.content", artifact.content)
        return replace(artifact, content=content)

    # ------------------------------------------------------------ audio
    def hold(self, segment: SegmentRecord) -> bool:
        state = self.sessions.get(segment.session_id)
        if state is None:
            return False
        if not state.released:  # audio after the session's end is not recorded
            state.segments.setdefault(str(segment.channel), []).append(segment)
        return True

    async def release(self, session_id: str) -> list[SegmentRecord]:
        state = self.sessions[session_id]
        if state.released:
            return []
        redaction = self.runs[state.run_id].redaction
        held, state.segments, state.released = state.segments, {}, True
        segments, entries = await asyncio.to_thread(
            mask_session, redaction, state.run_id, session_id, state.started_ns,
            held, state.units,
        )  # fmt: skip
        state.units = []
        await self._ledger(entries)
        return segments
