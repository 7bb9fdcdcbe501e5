"""One direction of audio through the bridge: resample, buffer, frame, noise, the line.

Pure signal code and its bookkeeping (drops, arrival lateness), per
direction; it knows nothing of sessions. May import the connector seam's
records (``connectors.base``) and nothing else of the bridge.
"""
