"""Sections of the run report, each rendered on its own: a run comparison, human
labels, the redaction ledger, a session's caller, its trace waterfall, extras.

Why a package: each section changes with its own feature (labels, redaction,
traces…) and not with the report's frame (``report.html``, ``session_html``),
which only places them. A section imports the report's style, SVG helpers and
data modules, never the frame.
"""
