"""One session's parts: its state, inputs, limits, turns, ending, final state and recording.

Everything a session holds and does with what its bots send, whatever
drives its clock (:mod:`vae.bridge_service.clocks`). May import ``audio``,
``config``, ``identity``, ``timebase`` and the connector seam.
"""
