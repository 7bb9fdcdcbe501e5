"""The ``vae`` the documentation tests put on PATH: this checkout's CLI, placeholders filled.

Documentation shows commands with placeholders a reader replaces by hand
(``vae report RUN``); this shim replaces each argument that *is* a
placeholder, at the moment the command runs, from the database the command
names (``--db FILE``, else ``$VAE_DB``, else ``vae.db``):

- ``RUN``: the newest run;
- ``SCORING_A`` / ``SCORING_B``: the newest run's second-newest / newest scoring;
- ``SESSION_ID``: the newest run's first session.

An argument containing the stand-in judge's documented address
(``127.0.0.1:8090``) gets the address of the judge the test started
(``$VAE_DOCS_JUDGE_ADDRESS``). Then it runs ``python -m vae.cli.main``.
"""

from __future__ import annotations

import os
import sys

PLACEHOLDERS = ("RUN", "SCORING_A", "SCORING_B", "SESSION_ID")
JUDGE_ADDRESS = "127.0.0.1:8090"


def _db(args: list[str]) -> str:
    for i, arg in enumerate(args):
        if arg == "--db" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--db="):
            return arg.removeprefix("--db=")
    return os.environ.get("VAE_DB", "vae.db")


def _values(db: str) -> dict[str, str]:
    from vae.recordings.read.reader import RecordingReader

    with RecordingReader(db) as reader:
        runs = reader.list_runs("", 0)
        if not runs:
            sys.exit(f"docs shim: no run in {db} to put for RUN")
        run_id = runs[0].run_id
        scorings = [s.scoring_id for s in reader.scorings(run_id)]
        sessions = [s.session_id for s in reader.sessions(run_id)]
    values = {"RUN": run_id}
    if scorings:
        values["SCORING_B"] = scorings[-1]
        values["SCORING_A"] = scorings[-2] if len(scorings) > 1 else scorings[-1]
    if sessions:
        values["SESSION_ID"] = sessions[0]
    return values


def main() -> None:
    args = sys.argv[1:]
    if any(a in PLACEHOLDERS for a in args):
        values = _values(_db(args))
        missing = [a for a in args if a in PLACEHOLDERS and a not in values]
        if missing:
            sys.exit(f"docs shim: nothing in {_db(args)} to put for {missing[0]}")
        args = [values.get(a, a) for a in args]
    judge = os.environ.get("VAE_DOCS_JUDGE_ADDRESS")
    if judge:
        args = [a.replace(JUDGE_ADDRESS, judge) for a in args]
    os.execv(sys.executable, [sys.executable, "-m", "vae.cli.main", *args])


if __name__ == "__main__":
    main()
