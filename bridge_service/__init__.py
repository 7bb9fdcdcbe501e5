"""The bridge service: pairs two bots, streams audio both ways on one clock, records everything.

Subpackages, by concept: ``connectors`` (the SideEndpoint seam and the
protocols behind it), ``audio`` (one direction of audio), ``session`` (one
session's parts), ``clocks`` (what drives a session's time), ``replay`` (a
recorded caller as a side), ``runs`` (pairing, attempts, retries, the run
manager), ``edge`` (the gRPC servicers), ``workers`` (a bridge per core),
``shared`` (bridges sharing runs on PostgreSQL), ``tools`` (a session's tool
backend), ``telemetry`` (the agent's OpenTelemetry spans in, each run's trace
out); ``server`` starts it all.
Imports ``vae.recordings`` and the contract, never the scorer, CLI or bots.

Layers, bottom to top (a unit imports only from its own layer or below;
``tests/test_import_direction.py`` holds the code to this list):

1. connectors, timebase, identity, event_loop
2. config, audio
3. session
4. clocks, replay, tools, telemetry
5. runs
6. edge
7. workers
8. shared
9. server
"""
