"""The ``vae`` command line: each command a thin call into a service or the store.

``main`` is a table of subcommands, each imported only when used, so the CLI
starts at once. Commands are grouped by what they work on: ``runs``,
``scoring``, ``gate``, ``ci`` (the pytest plugin), ``labels``, ``scenarios``,
``servers`` (bridge, scorer, judge, bots), ``demo`` and ``load`` (load and
soak tests of an agent). The CLI may import
every other package of vae.

Layers, bottom to top (a unit imports only from its own layer or below;
``tests/test_import_direction.py`` holds the code to this list):

1. common, tables, main, redaction, telemetry, telemetry_view
2. gate, labels, scenarios, servers
3. scoring
4. runs
5. ci, demo, load
"""
