"""Several bridges on one PostgreSQL store serving runs together (``--share-runs``).

A run started at any of these bridges (its *owner*) queues each attempt in
the store (``vae.recordings.write.session_jobs``) instead of pairing bots itself;
whichever bridge has a free pair of bots for it — a user and an agent bot
that may take the run, can follow its modality and clock — claims the
attempt with ``SELECT … FOR UPDATE SKIP LOCKED`` and runs it exactly as it
runs its own (at one of its workers with ``--workers N``), recording it with
its own identity. The owner keeps everything else of the run: retries,
progress events (WatchRun, ``vae run``), cancel and the run's status.

- :mod:`.presence`: each bridge beats in the store; a bridge whose beat has
  not moved for the lease (on the watcher's own clock) is dead.
- :mod:`.owner`: the owner's side of an attempt: queue it, announce it when
  claimed, read its recorded result when done, give it up when its claimer
  dies (``bridge_lost``: unfinished, so it is retried at a live bridge); a
  run still queued by a live owner is not resumed at another bridge.
- :mod:`.taker`: the claiming side: attempts for which this bridge has bots.
- :mod:`.service`: the three together, started and stopped with the server.

SQLite keeps one bridge per file (``--share-runs`` on SQLite is refused).
"""
