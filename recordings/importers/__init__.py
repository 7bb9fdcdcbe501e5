"""Importers: runs recorded by other tools, brought into the store so vae can rescore them.

Importers use only the standard library, numpy and the store's own writer
(docs/architecture.md, "The packages and their layers"): no protobuf, no
service code.
"""

from vae.recordings.importers.nemo.importer import import_nemo, import_nemo_sync
from vae.recordings.importers.nemo.layout import ImportSourceError, RunIdTakenError
from vae.recordings.importers.nemo.report import ImportReport, ScenarioReport

__all__ = [
    "ImportReport",
    "ImportSourceError",
    "RunIdTakenError",
    "ScenarioReport",
    "import_nemo",
    "import_nemo_sync",
]
