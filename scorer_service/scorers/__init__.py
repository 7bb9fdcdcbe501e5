"""The scorers: one per success signal, each reading a recorded session's context.

Each follows the :class:`~vae.scorer_service.scorer.Scorer` protocol and
returns its signals' scores; "unscored" with a cause where it cannot decide.
May import the judge, ``heard``, ``timing``, ``transcription.words`` and the
records at the bottom of the scorer (``config``, ``context``, ``signals``).
"""
