"""Phone agents over Twilio Media Streams: the protocol, μ-law, playout pacing, options.

Imports only the connector seam (``connectors.base``, ``options``,
``capabilities``).
"""
