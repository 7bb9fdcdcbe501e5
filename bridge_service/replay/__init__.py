"""Replay: the bridge plays a recorded caller to a new agent (``vae run --replay RUN``).

A replayed caller is a side like any other: it sits behind the
:class:`~vae.bridge_service.connectors.base.SideEndpoint` seam, its peer is the
store instead of a socket, and session, clock and recorder code never know
where the user side's audio comes from.

- :mod:`~vae.bridge_service.replay.player`: the turn-gated player (pure);
- :mod:`~vae.bridge_service.replay.endpoint`: the player as a SideEndpoint;
- :mod:`~vae.bridge_service.replay.source`: which run, scenarios and sessions a
  replay plays, and opening the replayed side for one attempt.

Cutting the recording into turns is the store's business:
:mod:`vae.recordings.read.replay_script`.
"""
