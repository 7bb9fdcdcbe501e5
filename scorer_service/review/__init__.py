"""The review page: a local web page on which people label a run's sessions.

``vae review RUN`` serves it on loopback (:mod:`vae.scorer_service.review.server`)
behind a random token; the page itself (:mod:`vae.scorer_service.review.page`) is
the report's session view — audio, timeline, transcript, the judge's verdicts
and reasons — with buttons that write labels to the store at once.
"""
