"""OpenTelemetry, as the store sees it: trace ids, the agent's spans, vae's own trace.

Pure records and rules, no OpenTelemetry library and no I/O (the OTLP decoding
and exporting is :mod:`vae.otel`; the bridge receives and matches, the CLI and
the scorer export):

- :mod:`.ids`: the run's trace id and each session's span id, derived from
  their names, so every process (the bridge that ran the run, a later
  ``vae rescore``) puts its spans in the one trace of the run without sharing
  state; and the W3C ``traceparent`` vae gives the agent;
- :mod:`.model`: an agent span as stored (:class:`AgentSpan`) and how it was
  tied to its session;
- :mod:`.outgoing`: vae's own trace of a run and of a scoring, as plain span
  records that :mod:`vae.otel.export` sends;
- :mod:`.waterfall`: a turn's agent spans beside the latency measured on the
  wire, and where a slow turn's time went.
"""
