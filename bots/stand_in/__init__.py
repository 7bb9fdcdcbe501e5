"""Stand-ins that run offline: a minimal OpenAI-compatible server and the rule-based judge.

Used by ``vae demo`` and the tests in place of a real LLM endpoint; the
loopback HTTP server they run on (``loopback``) also serves the LiveKit
example's stand-ins and the tests' speech servers. Imports nothing else of
the bots.
"""
