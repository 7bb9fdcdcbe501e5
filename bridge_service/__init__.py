"""The bridge service: sessions, the audio clock, recording, runs, connectors (DESIGN.md §3–4)."""
