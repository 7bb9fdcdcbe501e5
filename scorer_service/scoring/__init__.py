"""Scoring sessions: the plan, the work per session, the scorer registry, composites, rescore.

:func:`.rescore.rescore` is the one library call behind ``vae rescore``,
the Rescore RPC and the demo. May import the scorers, the judge, the
transcription stage, ``heard``, ``timing`` and the ledger.
"""
