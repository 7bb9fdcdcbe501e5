"""The scorer service: offline scoring of recorded runs, the score ledger, reports and the gate.

Subpackages, by concept: ``scorers`` (one per signal, over a
:class:`~vae.scorer_service.context.ScoringContext`), ``judge``, ``heard``,
``timing``, ``transcription`` (what scorers use), ``scoring`` (plan, work per
session, composites, rescore), ``ray_scoring``, ``ledger`` (scorings read
back and aggregated), ``compare``, ``labels`` (human labels and agreement),
``report``, ``review``, ``gate``, ``load`` (load and soak analysis: the
knee, harness headroom, drift) and ``edge`` (gRPC). Imports
``vae.recordings`` and the contract, never the bridge, CLI or bots.

Layers, bottom to top (a unit imports only from its own layer or below;
``tests/test_import_direction.py`` holds the code to this list):

1. config, signals, timing, backend_calls, context, context_load, overrides, scorer
2. judge, heard, transcription
3. scorers, ledger
4. scoring, compare, labels, load
5. report, ray_scoring
6. gate, review
7. edge
"""
