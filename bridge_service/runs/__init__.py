"""Runs: pairing bots, planning trials, dispatching and executing attempts, retries, outcomes.

:mod:`.attempt` is one session's lifecycle (start, drive its clock, the
ending handshake); :mod:`.manager` is the run manager behind StartRun,
CancelRun and WatchRun. May import clocks, session, replay, audio, config and
connectors; never the gRPC edge, workers or shared runs.
"""
