"""A reference bot's mouth and ears: speech synthesis, real-time PCM out, hearing the peer.

Leaf package: imports nothing of the bots, only numpy and the speech seam.
"""
