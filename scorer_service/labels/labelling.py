"""Turning "this person says pass on that thing" into a checked label, and storing it.

Why beside the scorer: what may be labelled is what a scoring decides — the
session as a whole (``is_successful``), one of the gating signals, or one NL
assertion — so the rules live next to the signals, once, for ``vae label``,
``vae labels import`` and the review page alike. A session is named by its id
or by its scenario (the latest attempt that was not superseded). An NL
assertion is named by its index; its text is kept with the label so a
scoring whose overrides reorder assertions is still matched by text.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from vae.recordings.labels import (
    LabelError,
    LabelKind,
    LabelRecord,
    check_labeller,
    check_note,
    default_labeller,
    parse_verdict,
)
from vae.recordings.models import ScoringRecord, SessionRecord
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.writer import open_writer
from vae.scorer_service import signals

#: Signals a person may label (the session as a whole is held against is_successful).
LABELLED_SIGNALS = signals.SUCCESS_SIGNALS


def resolve_session(reader: RecordingReader, run_id: str, ref: str) -> SessionRecord:
    """The session ``ref`` names in ``run_id``: its id, or a scenario's latest attempt."""
    session = reader.session(ref)
    if session is not None and session.run_id == run_id:
        return session
    latest = reader.latest_attempts(run_id).get(ref)
    if latest is not None:
        return latest
    raise LabelError(f"session: run {run_id} has no session or scenario {ref!r}")


def assertion_texts(
    reader: RecordingReader, session: SessionRecord, scoring: ScoringRecord | None = None
) -> list[str]:
    """The NL assertions a label may name for ``session``, by index.

    ``scoring``'s judged list when given (it includes its overrides), else the
    run's frozen scenario.
    """
    if scoring is not None:
        for score in reader.scores(scoring.scoring_id, session.session_id):
            rows = score.detail.get("verdicts") if score.signal == signals.NL_ASSERTION else None
            if isinstance(rows, list) and rows:
                return [str(r.get("assertion", "")) for r in rows if isinstance(r, dict)]
    for frozen in reader.run_scenarios(session.run_id):
        if frozen.scenario_name == session.scenario_name:
            found = frozen.scenario.get("nl_assertions")
            return [str(a) for a in found] if isinstance(found, list) else []
    return []


def known_assertions(reader: RecordingReader, session: SessionRecord) -> set[tuple[int, str]]:
    """Every (index, text) an NL assertion of ``session`` had: frozen, or in any scoring."""
    known = set(enumerate(assertion_texts(reader, session)))
    for scoring in reader.scorings(session.run_id):
        known.update(enumerate(assertion_texts(reader, session, scoring)))
    return known


def make_label(
    reader: RecordingReader,
    run_id: str,
    session_ref: str,
    verdict: object,
    *,
    signal: str | None = None,
    assertion: int | None = None,
    note: object = "",
    by: object = None,
    at_ns: int | None = None,
    scoring: ScoringRecord | None = None,
    assertion_text: str = "",
) -> LabelRecord:
    """A checked label; raises :class:`LabelError` naming the field that is wrong.

    ``assertion_text`` (an imported label's): accepted when the session's
    assertion ``assertion`` had that text, frozen or in one of the run's scorings.
    """
    session = resolve_session(reader, run_id, session_ref)
    if signal and assertion is not None:
        raise LabelError("give a signal or an assertion, not both")
    kind, text, index = LabelKind.SESSION, "", -1
    signal = signal.strip().upper() if signal else ""
    if signal:
        if signal not in LABELLED_SIGNALS:
            raise LabelError(
                f"signal: {signal!r} cannot be labelled (choose from {', '.join(LABELLED_SIGNALS)})"
            )
        kind = LabelKind.SIGNAL
    elif assertion is not None and assertion_text:
        if not isinstance(assertion, int) or (assertion, assertion_text) not in known_assertions(
            reader, session
        ):
            raise LabelError(
                f"assertion: {session.scenario_name} never had {assertion_text!r} as NL "
                f"assertion {assertion!r}"
            )
        kind, text, index = LabelKind.ASSERTION, assertion_text, assertion
    elif assertion is not None:
        texts = assertion_texts(reader, session, scoring)
        if not isinstance(assertion, int) or not 0 <= assertion < len(texts):
            have = f"0..{len(texts) - 1}" if texts else "none"
            raise LabelError(
                f"assertion: {session.scenario_name} has {len(texts)} NL assertion(s) "
                f"(indexes {have}); got {assertion!r}"
            )
        kind, text, index = LabelKind.ASSERTION, texts[assertion], assertion
    return LabelRecord(
        run_id=run_id,
        session_id=session.session_id,
        kind=kind,
        verdict=parse_verdict(verdict),
        labeller=default_labeller() if by in (None, "") else check_labeller(by),
        created_ns=time.time_ns() if at_ns is None else at_ns,
        signal=signal,
        assertion=index,
        assertion_text=text,
        note=check_note(note),
    )


async def store_labels(db_path: str | Path, labels: Sequence[LabelRecord]) -> None:
    """Write ``labels`` through the file's single writer and wait until they are committed."""
    async with open_writer(db_path) as writer:
        await writer.add_labels(labels)
        await writer.flush()
