"""What drives a session's time: the shared ticker, the open mic, the lock-step and text clocks.

Each driver advances one session (:mod:`vae.bridge_service.session`) frame by
frame or turn by turn, on real or virtual time (the seam is
:mod:`vae.bridge_service.timebase`). May import ``session``, ``audio``,
``config`` and ``connectors``; never runs or the gRPC edge.
"""
