"""Errors raised by the store.

The hierarchy, drawn once::

    StoreError                      anything the store refuses or cannot do
    ├── SchemaError                 the file's schema cannot be used
    │   └── SchemaTooNewError       written by a newer vae; refused, never touched
    ├── RunSelectionError           a --run reference did not name one run
    │   ├── RunNotFoundError        no run matches
    │   └── AmbiguousRunError       several runs match; `.candidates` lists them
    ├── ScenarioError               a scenario document is invalid; names path and field
    ├── WriterClosedError           a write was submitted to a writer that has stopped
    └── StorageError                the file cannot be written any more (disk full, I/O
                                    error, deleted or replaced, locked beyond the timeout)

A locked database is not an error here: the writer waits (busy timeout, then
retries with backoff) and never drops a batch — up to its lock timeout, after
which the lock counts as a storage failure.
"""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every error the store raises."""


class SchemaError(StoreError):
    """The database's schema cannot be used by this version of vae."""


class SchemaTooNewError(SchemaError):
    """The database was written by a newer vae (a migration we do not know)."""


class RunSelectionError(StoreError):
    """A run reference (exact id or prefix) did not select exactly one run."""


class RunNotFoundError(RunSelectionError):
    def __init__(self, ref: str) -> None:
        super().__init__(f"no run matches {ref!r}")
        self.ref = ref


class AmbiguousRunError(RunSelectionError):
    def __init__(self, ref: str, candidates: list[str]) -> None:
        listed = ", ".join(candidates[:20]) + (" ..." if len(candidates) > 20 else "")
        super().__init__(f"{ref!r} matches {len(candidates)} runs: {listed}; give more of the id")
        self.ref = ref
        self.candidates = candidates


class ScenarioError(StoreError):
    """A scenario document is invalid. The message names the source, field and problem.

    ``source``/``field``/``problem`` are the first problem; ``problems`` holds
    every problem found (each already formatted ``source[:line:col]: field:
    problem``), and the message lists them all, one a line.
    """

    def __init__(
        self, source: str, field: str, problem: str, problems: list[str] | None = None
    ) -> None:
        self.problems = problems or [f"{source}: {field}: {problem}"]
        super().__init__("\n".join(self.problems))
        self.source = source
        self.field = field
        self.problem = problem


class WriterClosedError(StoreError):
    """A write was submitted after the writer stopped."""


class StorageError(StoreError):
    """The store cannot be written any more; the message says why and names the file."""
