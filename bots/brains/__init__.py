"""What a reference bot thinks: the scripted and LLM brains, the caller's voice and behaviours.

The scripted agent may be given a capacity (:mod:`.capacity`: slower replies
beyond it, the subject of a load test). A brain sees one session through
:mod:`.conversation` (speak, listen, call tools, report) and never the wire.
May import :mod:`vae.bots.sound` and the contract (``vae.common.v1``,
``vae.dtmf``); never the client or the runner.
"""
