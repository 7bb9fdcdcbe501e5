"""Run vs run and scoring vs scoring: what regressed, what was fixed, and why.

A library call over the ledger (:mod:`vae.scorer_service.ledger`); ``vae
compare``, the report and CompareScorings are thin callers of it.
"""
