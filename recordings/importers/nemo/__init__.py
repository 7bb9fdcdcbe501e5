"""Importing runs recorded by NVIDIA NeMo's voice-agent evaluation: files, sessions, scores.

May import the store's writer and records, and ``recordings.scenarios``.
"""
