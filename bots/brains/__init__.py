"""What a reference bot thinks: the scripted and LLM brains, the caller's voice and behaviours.

A brain sees one session through :mod:`.conversation` (speak, listen, call
tools, report) and never the wire. May import :mod:`vae.bots.sound` and the
contract (``vae.common.v1``, ``vae.dtmf``); never the client or the runner.
"""
