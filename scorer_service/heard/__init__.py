"""Said versus heard: normalise, align, find critical mismatches, attribute failures.

The pieces HEARD_CORRECTLY (:mod:`vae.scorer_service.scorers.heard`) is made of:
:mod:`~vae.scorer_service.heard.normalise` (words to compare),
:mod:`~vae.scorer_service.heard.align` (the edit path and WER),
:mod:`~vae.scorer_service.heard.critical` (dates, numbers, codes, names),
:mod:`~vae.scorer_service.heard.compare` (a session's turns, said and heard) and
:mod:`~vae.scorer_service.heard.attribution` (a failure traced to a mishearing).
"""
