"""What a call cost: usage from what was recorded, priced by a table the user supplies.

Pure rules, no I/O beyond reading a price file:

- :mod:`.prices`: the TOML price table (``--prices FILE``): its schema, checks
  and lookup; vae ships an example, never prices as facts;
- :mod:`.usage`: a session's usage from the agent's reports (pipecat usage
  metrics and GenAI span attributes, the same call reported both ways counted
  once; STT seconds from the caller audio vae sent unless the agent says),
  and a scoring's from the judge's calls and the LLM caller's reports;
- :mod:`.compute`: usage times prices, where a missing price is unknown
  (None), never 0, and every total says how many items were unknown.
"""
