"""``vae import calls PATH…``: recordings of real calls into the store, as test cases.

Why: calls a deployed agent really had are the best test cases there are.
Imported as a run (``source = "import:calls"``) with one session per call,
they can be rescored like any run and replayed (``vae run --replay``) against
a new agent: the bridge plays the recorded caller turn by turn.

What a call gives (files: :mod:`vae.recordings.importers.calls_files`):

- the caller's and the agent's audio as channels ``user`` and ``agent``, on
  one clock from the start of the recording;
- turns found by voice activity (:mod:`vae.recordings.vad`) on each channel,
  recorded as ``speech_started``/``speech_stopped`` events (source ``vad``)
  and counted as the session's turns;
- with a transcript sidecar, each line as a spoken transcript at its times;
- with a scenario (the call's own sidecar, else one given for all calls), the
  expected actions, DBs and assertions, frozen with the run under the call's
  name. Without one, a bare scenario named after the call.

Each call ends ``recording_ended`` (``vae.recordings.stop_reasons``): a finished
attempt — the call ran to its end — so it is scored like any session. What a
recording cannot give — the agent's tool calls, its final state, its LLM
context, how the call ended — is declared in the run's options
(``"lacks"``), so a rescore reports the signals that need them (CLEAN_EXIT
among them) as ``unscored``, never as passed or failed; ``is_successful`` is
decided only when every gating signal could be (NL assertions or the judge
reading the transcript).

Everything is checked before anything is written: a bad file is an
:class:`~vae.recordings.importers.nemo.layout.ImportSourceError` naming it, and
the database is left untouched. Audio broken past a valid header is only
found while reading: the calls before it are kept, the run is marked
``failed`` and :class:`PartialImportError` names the file and the run. A
storage failure stops the import at the next call, the run marked ``failed``
where the store still accepts it (never ``completed``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from vae.recordings.audio import SegmentBuilder
from vae.recordings.backends.locator import StoreRef
from vae.recordings.errors import StorageError, StoreError
from vae.recordings.importers.calls_files import (
    CallFiles,
    CheckedCall,
    ScenarioLoader,
    check_call,
    find_calls,
    load_json_scenario,
)
from vae.recordings.importers.existing import run_ids
from vae.recordings.importers.nemo.layout import ImportSourceError, choose_run_id, session_id_for
from vae.recordings.models import (
    Channel,
    EventKind,
    EventRecord,
    RunRecord,
    RunScenario,
    RunStatus,
    SegmentRecord,
    SessionRecord,
    SessionStatus,
    Side,
)
from vae.recordings.redact.live import redact_as_written
from vae.recordings.redact.model import Redaction
from vae.recordings.vad import spurts
from vae.recordings.write.writer import RecordingWriter, open_writer

SOURCE = "import:calls"
#: Each call's stop reason: finished (the call ran to its end), how it ended unknown.
RECORDING_ENDED = "recording_ended"
#: What a recorded call cannot tell; the scorer leaves the signals needing it unscored.
LACKS = ["tool_calls", "final_state", "llm_context", "end_reason"]
_NS = 1_000_000_000


class PartialImportError(StoreError):
    """A call failed while being read, after the run was written: the run is ``failed``.

    Not an :class:`ImportSourceError` (nothing written, a usage error): the run
    ``run_id`` exists with the ``imported`` calls before the bad one.
    """

    def __init__(self, run_id: str, imported: int, why: str) -> None:
        super().__init__(
            f"{why}; run {run_id} was recorded as failed with the {imported} call(s) before it"
        )
        self.run_id = run_id
        self.imported = imported


@dataclass
class CallReport:
    name: str
    session_id: str
    files: list[str]
    duration_s: float
    user_turns: int
    agent_turns: int
    transcript_lines: int
    scenario: str  # "own" | "shared" | "none"


@dataclass
class CallsReport:
    run_id: str
    calls: list[CallReport] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "calls": [asdict(c) for c in self.calls]}


@dataclass
class _Call:
    report: CallReport
    scenario: dict[str, Any]
    session: SessionRecord
    segments: list[SegmentRecord]
    events: list[EventRecord]


async def import_calls(
    db_path: StoreRef,
    paths: list[Path],
    *,
    caller_channel: str = "left",
    scenario: dict[str, Any] | None = None,
    load_scenario: ScenarioLoader = load_json_scenario,
    run_id: str | None = None,
    max_seconds: float = 3600,
    redaction: Redaction | None = None,
) -> CallsReport:
    """Import the calls found in ``paths`` as one new run; return what was imported.

    With ``redaction``, nothing personal is written: the run's texts get
    placeholders and its audio is masked where the transcripts (and their
    timed words) found personal data, before any row reaches the store
    (:mod:`vae.recordings.redact.live`).
    """
    if caller_channel not in ("left", "right"):
        raise ImportSourceError("caller channel must be left or right")
    found = await asyncio.to_thread(find_calls, [Path(p) for p in paths])
    existing = await asyncio.to_thread(run_ids, db_path)
    rid = choose_run_id(run_id, time.strftime("calls-%Y-%m-%dT%H-%M-%S"), existing)
    base = time.time_ns()
    # Every call is checked (formats, lengths, sidecars) before anything is written.
    checked = [
        await asyncio.to_thread(check_call, c, scenario, load_scenario, max_seconds) for c in found
    ]
    options: dict[str, object] = {
        "end_policy": "tool-only",
        "imported_from": sorted(str(p) for c in found for p in c.audio),
        "caller_channel": caller_channel,
        "lacks": LACKS,
    }
    report = CallsReport(rid)
    async with open_writer(db_path) as writer:
        if redaction is not None:
            redact_as_written(writer, rid, redaction, mode="import")
        await writer.create_run(
            RunRecord(
                rid,
                base,
                RunStatus.RUNNING,
                "import",
                options,
                ["imported", "calls"],
                None,
                SOURCE,
            )
        )
        try:
            for ordinal, item in enumerate(checked):
                if writer.failure is not None:  # stop at once: nothing more can be stored
                    raise StorageError(f"import stopped: {writer.failure}")
                call = await asyncio.to_thread(_read_call, rid, item, base, caller_channel)
                await _write_call(writer, rid, ordinal, call)
                report.calls.append(call.report)
            # Every call is committed before the run may say ``completed``.
            await writer.flush()
        except BaseException as exc:
            # Keep what was imported and say the run failed (after a storage failure
            # this status is what the store may still salvage).
            await writer.update_run_status(rid, str(RunStatus.FAILED), time.time_ns(), str(exc))
            with contextlib.suppress(StoreError):
                await writer.flush()
            if isinstance(exc, ImportSourceError):
                # Audio that decoded badly past its header: a run was written.
                raise PartialImportError(rid, len(report.calls), str(exc)) from exc
            raise
        await writer.update_run_status(rid, str(RunStatus.COMPLETED), time.time_ns())
        await writer.flush()
    return report


async def _write_call(writer: RecordingWriter, rid: str, ordinal: int, call: _Call) -> None:
    name = call.report.name
    domain = str(call.scenario.get("domain", "imported"))
    await writer.add_run_scenarios([RunScenario(rid, name, ordinal, domain, call.scenario)])
    await writer.start_session(call.session)
    for seg in call.segments:
        await writer.add_segment(seg)
    await writer.add_events(call.events)
    await writer.end_session(
        call.session.session_id,
        ended_ns=call.session.started_ns + int(call.report.duration_s * _NS),
        stop_reason=RECORDING_ENDED,
        stop_detail="imported call: the recording ran to its end; how the call ended is not"
        " recorded",
        clean_exit=None,
        user_turns=call.report.user_turns,
        agent_turns=call.report.agent_turns,
    )


def _read_call(run_id: str, checked: CheckedCall, base: int, caller_channel: str) -> _Call:
    files, doc, kind, lines = checked.files, checked.scenario, checked.kind, checked.lines
    channels = _channels(files, caller_channel)
    sid = session_id_for(run_id, files.name, 1)
    segments: list[SegmentRecord] = []
    events: list[EventRecord] = []
    turns: dict[Side, int] = {}
    duration = 0.0
    rates: dict[str, int] = {}
    for side, (samples, rate) in channels.items():
        channel = Channel.USER if side is Side.USER else Channel.AGENT
        rates[str(channel)] = rate
        duration = max(duration, len(samples) / rate)
        segments.extend(_segments(sid, channel, samples, rate, base))
        found = spurts(samples, rate)
        turns[side] = len(found)
        for s in found:
            for kind_, at in (
                (EventKind.SPEECH_STARTED, s.start),
                (EventKind.SPEECH_STOPPED, s.end),
            ):
                payload = {"source": "vad", "sample_offset": at}
                events.append(EventRecord(sid, side, kind_, base + at * _NS // rate, payload))
    for line in lines:
        payload = {
            "kind": "spoken",
            "text": line.text,
            "is_final": True,
            "start_s": line.start_s,
            "end_s": line.end_s,
            "source": "transcript sidecar",
        }
        if line.words:
            payload["words"] = [{"word": w, "start": a, "end": b} for w, a, b in line.words]
        at = base + int(line.end_s * _NS)
        events.append(EventRecord(sid, Side(line.side), EventKind.TRANSCRIPT, at, payload))
    events.sort(key=lambda e: e.bridge_ns)
    audio: dict[str, object] = {"rates": rates, "imported_from": [str(p) for p in files.audio],
             "caller_channel": caller_channel if files.stereo else "file"}  # fmt: skip
    bot = {"name": "recorded-call", "imported": True}
    session = SessionRecord(sid, run_id, files.name, 1, SessionStatus.RUNNING, base,
                            user_bot=bot, agent_bot=bot, audio=audio)  # fmt: skip
    report = CallReport(files.name, sid, [str(p) for p in files.audio], round(duration, 3),
                        turns[Side.USER], turns[Side.AGENT], len(lines), kind)  # fmt: skip
    return _Call(report, doc, session, segments, events)


def _channels(files: CallFiles, caller_channel: str) -> dict[Side, tuple[np.ndarray, int]]:
    if files.stereo is not None:
        data, rate = _read(files.stereo)
        user = 0 if caller_channel == "left" else 1
        return {
            Side.USER: (np.ascontiguousarray(data[:, user]), rate),
            Side.AGENT: (np.ascontiguousarray(data[:, 1 - user]), rate),
        }
    assert files.caller is not None and files.agent is not None
    out = {}
    for side, path in ((Side.USER, files.caller), (Side.AGENT, files.agent)):
        data, rate = _read(path)
        out[side] = (np.ascontiguousarray(data[:, 0]), rate)
    return out


def _read(path: Path) -> tuple[np.ndarray, int]:
    try:
        data, rate = sf.read(str(path), dtype="int16", always_2d=True)
    except (RuntimeError, sf.LibsndfileError) as exc:
        raise ImportSourceError(f"{path}: cannot decode ({exc})") from exc
    return np.asarray(data, dtype=np.int16), int(rate)


def _segments(
    sid: str, channel: Channel, samples: np.ndarray, rate: int, base: int
) -> list[SegmentRecord]:
    builder = SegmentBuilder(sid, channel, rate)
    out: list[SegmentRecord] = []
    for seq, offset in enumerate(range(0, len(samples), rate)):
        chunk = samples[offset : offset + rate].astype("<i2").tobytes()
        out.extend(builder.add(chunk, offset, seq, base + offset * _NS // rate))
    out.extend(builder.close())
    return out
