"""A bridge on every core: ``vae bridge serve --workers N``.

Why this shape: a bot holds one gRPC channel (one TCP connection) and
multiplexes all its streams on it, so sharing the listening socket between
processes would put all of one bot's streams in one process and its peers'
in another, where they could never pair. Instead the process on the public
address — the **front door** — stays a whole bridge (run control, pairing,
every client that knows nothing of workers) and starts N **worker**
processes on loopback-or-same-host ports:

- ``process`` and ``pool`` (front door): start, watch, restart and stop the
  workers, and pick the least loaded one;
- ``dispatch`` and ``remote_wire`` (front door): once a session's two bots
  are paired and both accept redirects, hand the session to a worker over
  the internal ``vae.internal.v1.BridgeWorker`` service, redirect both bots
  there with one-time tickets, and turn the worker's answer (or its death:
  ``worker_lost``) into the attempt's result, so retries, progress and run
  status stay where they were;
- ``tickets``, ``serve_session``, ``worker_servicer``, ``worker_server`` and
  ``main`` (worker): admit the redirected bots by ticket and run the session
  exactly as a bridge without workers does, writing to the same store;
- ``config`` (what a worker is started with) and ``convert`` (the internal
  wire's messages) are shared by both ends.

The seam the front door uses is ``vae.bridge_service.runs.dispatch``: a shared session
queue of several bridges could implement it the same way.
"""
