"""OpenTelemetry in the bridge: the agent's spans received and tied to sessions, and
each run's trace exported when it ends.

- :mod:`.registry`: the sessions spans may belong to (running, or ended less
  than 10 s ago), with their trace context and agent endpoint;
- :mod:`.matcher`: ties each received span to its session by the rules of
  :mod:`vae.recordings.traces.model`, holds the spans whose parent has not
  arrived yet, and writes them to the store;
- :mod:`.run_export`: the run's trace built from the store and sent, bounded in
  time, with its counts recorded;
- :mod:`.hub`: what the bridge holds: the receivers (``vae bridge serve
  --otlp-receiver`` for every run, ``vae run --otlp-receiver`` for one run and
  10 s after), the matcher, the export at each run's end.

Nothing here imports OpenTelemetry unless a receiver or an endpoint is set.
"""
