"""Importers: runs recorded by other tools, brought into the store so vae can rescore them.

Importers use only the standard library, numpy and the store's own writer
(DESIGN.md §1): no protobuf, no service code.
"""

from recordings.importers.nemo import (
    ImportReport,
    ImportSourceError,
    ScenarioReport,
    import_nemo,
    import_nemo_sync,
)

__all__ = ["ImportReport", "ImportSourceError", "ScenarioReport", "import_nemo", "import_nemo_sync"]
