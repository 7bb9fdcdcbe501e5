"""The bridge service: sessions, the audio clock, recording, runs, connectors."""
