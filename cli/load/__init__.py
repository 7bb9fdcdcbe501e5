"""``vae load``: how many calls at once an agent holds before it degrades, and over hours.

The command (``load_cmd``) and its plan (``load_plan``: steps, durations,
their checks); what it starts when no ``--bridge`` is given
(``load_harness``: a bridge in this process, the callers, the reference
agent in a child process); how each step or soak runs as an ordinary run
(``load_driver``), what it measures of the harness meanwhile
(``load_probe``), and how the recorded calls become figures, the knee and
the report (``load_analyse``, ``load_output``). The analysis itself is
``vae.scorer_service.load``.
"""
