"""Scoring on Ray: connecting, the task per batch of sessions, and the runner that fans out.

May import ``scoring``, ``judge`` and ``ledger``.
"""
