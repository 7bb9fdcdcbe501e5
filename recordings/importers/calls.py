"""``vae import calls PATH…``: recordings of real calls into the store, as test cases.

Why: calls a deployed agent really had are the best test cases there are.
Imported as a run (``source = "import:calls"``) with one session per call,
they can be rescored like any run and replayed (``vae run --replay``) against
a new agent: the bridge plays the recorded caller turn by turn.

What a call gives (files: :mod:`vae.recordings.importers.calls_files`; read into
rows: :mod:`vae.recordings.importers.calls_read`):

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

from vae.recordings.backends.locator import StoreRef
from vae.recordings.errors import StorageError, StoreError
from vae.recordings.importers.calls_files import (
    ScenarioLoader,
    check_call,
    find_calls,
    load_json_scenario,
)
from vae.recordings.importers.calls_read import NS, CallReport, CallRows, read_call
from vae.recordings.importers.existing import run_ids
from vae.recordings.importers.nemo.layout import ImportSourceError, choose_run_id
from vae.recordings.models import RunRecord, RunScenario, RunStatus
from vae.recordings.redact.live import redact_as_written
from vae.recordings.redact.model import Redaction
from vae.recordings.write.writer import RecordingWriter, open_writer

SOURCE = "import:calls"
#: Each call's stop reason: finished (the call ran to its end), how it ended unknown.
RECORDING_ENDED = "recording_ended"
#: What a recorded call cannot tell; the scorer leaves the signals needing it unscored.
LACKS = ["tool_calls", "final_state", "llm_context", "end_reason"]


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
class CallsReport:
    run_id: str
    calls: list[CallReport] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "calls": [asdict(c) for c in self.calls]}


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
                call = await asyncio.to_thread(read_call, rid, item, base, caller_channel)
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


async def _write_call(writer: RecordingWriter, rid: str, ordinal: int, call: CallRows) -> None:
    name = call.report.name
    domain = str(call.scenario.get("domain", "imported"))
    await writer.add_run_scenarios([RunScenario(rid, name, ordinal, domain, call.scenario)])
    await writer.start_session(call.session)
    for seg in call.segments:
        await writer.add_segment(seg)
    await writer.add_events(call.events)
    await writer.end_session(
        call.session.session_id,
        ended_ns=call.session.started_ns + int(call.report.duration_s * NS),
        stop_reason=RECORDING_ENDED,
        stop_detail="imported call: the recording ran to its end; how the call ended is not"
        " recorded",
        clean_exit=None,
        user_turns=call.report.user_turns,
        agent_turns=call.report.agent_turns,
    )
