"""The identity of an imported source: resolved path and a hash of its content.

Why: importing the same results directory twice used to create a full
duplicate run silently, and every rate computed over the database then
counted its sessions twice. An import records the directory's resolved path
and content hash in the run's options; importing a source already imported
(same path, same hash) is refused with the existing run id unless asked again
explicitly (``vae import nemo --again``). A directory whose content changed
since (a resumed run wrote more) is a new source and imports normally.

The hash covers every regular file's relative path and bytes, in sorted
order; a symlink contributes its target text (it is never followed here).
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from vae.recordings.backends.locator import StoreRef
from vae.recordings.importers.existing import existing_reader
from vae.recordings.importers.nemo.layout import ImportSourceError

_CHUNK = 1 << 20


class AlreadyImportedError(ImportSourceError):
    """The same source (path and content) is already a run in this database."""

    def __init__(self, root: Path, run_id: str) -> None:
        super().__init__(
            f"{root} is already imported as run {run_id} (same path and content); "
            "use --again to import it once more"
        )
        self.run_id = run_id


def fingerprint(root: Path) -> str:
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames if os.path.islink(Path(dirpath, d))]):
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            try:
                st = path.lstat()
            except OSError:
                continue
            digest.update(rel.encode("utf-8", "surrogateescape") + b"\0")
            if stat.S_ISLNK(st.st_mode):
                digest.update(b"L" + os.readlink(path).encode("utf-8", "surrogateescape"))
            elif stat.S_ISREG(st.st_mode):
                digest.update(b"F%d\0" % st.st_size)
                with path.open("rb") as f:
                    while chunk := f.read(_CHUNK):
                        digest.update(chunk)
            digest.update(b"\0")
    return digest.hexdigest()


def find_import(db_path: StoreRef, source: str, root: Path, content_hash: str) -> str | None:
    """The run id that already holds this source, if any."""
    with existing_reader(db_path) as reader:
        if reader is None:
            return None
        for run in reader.list_runs():
            options = run.options
            if (
                run.source == source
                and options.get("imported_from") == str(root)
                and options.get("import_hash") == content_hash
            ):
                return run.run_id
    return None
