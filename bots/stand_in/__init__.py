"""Stand-ins that run offline: a minimal OpenAI-compatible server and the rule-based judge.

Used by ``vae demo`` and the tests in place of a real LLM endpoint; imports
nothing else of the bots.
"""
