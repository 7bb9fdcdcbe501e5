"""The load report: one self-contained HTML page per ``vae load`` (``--report FILE``).

Apart from the run report beside it: it charts steps of many runs (latency
and success against concurrency, the knee, harness headroom, a soak's drift),
not one run's sessions. ``page`` renders it, ``soak`` its soak section,
``line_chart`` the SVG line charts both draw. Shares the run report's style
and SVG text metrics, nothing else.
"""
