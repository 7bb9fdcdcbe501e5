"""Load and soak analysis: what many calls at once and many hours of calls did to an agent.

``vae load`` records each step (one level of concurrency) and each soak as
an ordinary run and scores it as ``vae rescore`` does; this unit turns those
recordings and verdicts into the answers: per step the calls, the success
rate from gating verdicts, stop reasons, the agent's response latency from
audio (p50/p95/p99), time to first audio and errors by kind (``calls``,
``figures``); the knee, the first step where the agent degraded, and the
gate on it (``knee``); whether the harness rather than the agent was
saturated (``headroom``); and a soak's windows and latency drift with its
confidence interval (``soak``, ``drift``). Pure functions over plain data:
the CLI measures and runs, the report draws. Imports the ledger, the timing
metrics and the store.
"""
