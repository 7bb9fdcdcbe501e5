"""Human labels: a person's verdict on a session, one of its signals or one NL assertion.

Why a record of its own: a label is evidence about the *judge*, not about the
agent. It never changes a scoring; it is held against scorings afterwards
(``vae scores agree``). Every label is kept — several people may label the
same thing, and the same person may change their mind (their latest label
counts, the earlier one stays in the history).

The store knows a label's shape and the rules of its free-text fields; which
signals may be labelled is the scorer's knowledge (``vae.scorer_service.labels.labelling``).
Reads and writes are :mod:`vae.recordings.write.label_rows`.
"""

from __future__ import annotations

import enum
import getpass
import os
import re
from dataclasses import dataclass

from vae.recordings.errors import StoreError

#: At most this many characters in a labeller's name and in a note.
MAX_LABELLER = 100
MAX_NOTE = 4000

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class LabelError(StoreError, ValueError):
    """A label field that breaks its rule; the message names the field."""


class LabelVerdict(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    #: "can't tell": kept, shown, and counted apart — never as agreement.
    UNSURE = "unsure"


class LabelKind(enum.StrEnum):
    #: The session as a whole (held against ``is_successful``).
    SESSION = "session"
    #: One signal of the session (``signal`` names it).
    SIGNAL = "signal"
    #: One NL assertion (``assertion`` is its index, ``assertion_text`` its text).
    ASSERTION = "assertion"


@dataclass(frozen=True, slots=True)
class LabelRecord:
    run_id: str
    session_id: str
    kind: LabelKind
    verdict: LabelVerdict
    labeller: str
    created_ns: int
    signal: str = ""
    #: The NL assertion's index in the scenario's list; -1 for other kinds.
    assertion: int = -1
    #: The assertion's text when it was labelled (matched against each scoring's).
    assertion_text: str = ""
    note: str = ""
    id: int | None = None

    @property
    def item(self) -> str:
        """What was labelled: ``session``, ``signal:NAME`` or ``assertion:N``."""
        if self.kind is LabelKind.SIGNAL:
            return f"signal:{self.signal}"
        if self.kind is LabelKind.ASSERTION:
            return f"assertion:{self.assertion}"
        return "session"


def parse_verdict(value: object) -> LabelVerdict:
    """``pass``, ``fail`` or ``unsure`` (any case; ``can't tell`` means unsure)."""
    text = str(value).strip().lower() if isinstance(value, str) else ""
    if text in ("can't tell", "cant_tell", "can't_tell", "cant tell"):
        return LabelVerdict.UNSURE
    try:
        return LabelVerdict(text)
    except ValueError:
        raise LabelError(
            f"verdict: {value!r} is not one of pass, fail, unsure (can't tell)"
        ) from None


def check_labeller(value: object) -> str:
    """A labeller's name: 1–100 printable characters, surrounding spaces dropped."""
    if not isinstance(value, str) or not value.strip():
        raise LabelError("by: a labeller's name must not be empty")
    name = value.strip()
    if len(name) > MAX_LABELLER:
        raise LabelError(f"by: {len(name)} characters long; at most {MAX_LABELLER}")
    if _CONTROL.search(name) or "\n" in name or "\t" in name:
        raise LabelError("by: control characters are not allowed in a name")
    return name


def check_note(value: object) -> str:
    """A note: at most 4,000 characters; newlines and tabs kept, other control characters not."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise LabelError(f"note: must be text, got {type(value).__name__}")
    if len(value) > MAX_NOTE:
        raise LabelError(f"note: {len(value)} characters long; at most {MAX_NOTE}")
    if _CONTROL.search(value):
        raise LabelError("note: control characters other than newline and tab are not allowed")
    return value


def default_labeller() -> str:
    """The OS user (``--by`` when not given); ``unknown`` when it cannot be found."""
    try:
        return check_labeller(getpass.getuser())
    except (LabelError, KeyError, OSError):
        return check_labeller(os.environ.get("USER") or "unknown")
