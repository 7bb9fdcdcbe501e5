"""The one grammar of identifiers: run ids, scenario names, tags, session ids.

Identifiers travel into file names (``vae export`` writes ``<out>/<run>/
<scenario>.<attempt>.wav``), log lines, HTML reports and SQL ``LIKE``
prefixes, and they arrive from untrusted places: gRPC clients, scenario files,
imported directories, the command line. One strict grammar, checked wherever
an identifier enters, keeps every later use safe without each writer having
to escape it:

- ASCII letters, digits and ``.``, ``_``, ``-`` only (no ``/``, ``\\``,
  spaces, control or non-ASCII characters);
- the first character is a letter, digit or ``_`` (no leading ``.`` — hidden
  files, ``..`` — and no leading ``-``, which a command line reads as an
  option);
- at most :data:`MAX_ID` (128) characters; a session id, composed by the
  bridge as ``<run>_<scenario>_a<attempt>``, at most :data:`MAX_SESSION_ID`
  (300).

A run *reference* (an exact id or a prefix such as ``2024-06``) and a run
filter follow the same grammar (the empty string meaning "any"). Documented
for users in ``docs/errors.md``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from vae.recordings.errors import StoreError

MAX_ID = 128
MAX_SESSION_ID = 300

_GRAMMAR = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
GRAMMAR_TEXT = "letters, digits, '.', '_' or '-', not starting with '.' or '-'"


class InvalidIdentifier(StoreError, ValueError):
    """An identifier outside the grammar; the message names the field."""

    def __init__(self, field: str, value: str, problem: str) -> None:
        shown = value if len(value) <= 40 else value[:40] + "…"
        super().__init__(f"{field}: {shown!r} {problem}")
        self.field = field
        self.value = value


def problem(value: object, *, limit: int = MAX_ID) -> str | None:
    """What is wrong with ``value`` as an identifier, or None when it is valid."""
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    if not value:
        return "must not be empty"
    if len(value) > limit:
        return f"is {len(value)} characters long; at most {limit}"
    if not _GRAMMAR.fullmatch(value):
        return f"is not a valid identifier ({GRAMMAR_TEXT})"
    return None


def check(field: str, value: str, *, limit: int = MAX_ID, allow_empty: bool = False) -> str:
    """Return ``value`` if valid; raise :class:`InvalidIdentifier` naming ``field``."""
    if allow_empty and value == "":
        return value
    why = problem(value, limit=limit)
    if why is not None:
        raise InvalidIdentifier(field, str(value), why)
    return value


def check_all(field: str, values: Iterable[str]) -> list[str]:
    """Check each of a list (``tags[0]``, ``tags[1]`` … in messages)."""
    return [check(f"{field}[{i}]", v) for i, v in enumerate(values)]


def is_valid(value: object, *, limit: int = MAX_ID) -> bool:
    return problem(value, limit=limit) is None


def slug(text: str, default: str = "item") -> str:
    """A valid identifier derived from free text (for importers naming things)."""
    out = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:MAX_ID].rstrip("-.")
    return out if out and is_valid(out) else default


class OutsideTarget(ValueError):
    """A file path that resolves outside the directory a command was given."""


def contained(root: str | Path, *parts: str) -> Path:
    """``root/parts…`` resolved, refusing any result outside ``root`` (also via symlinks)."""
    base = Path(root).resolve()
    path = base.joinpath(*parts).resolve()
    if path != base and base not in path.parents:
        raise OutsideTarget(f"refusing to write {path}: outside the output directory {base}")
    return path
