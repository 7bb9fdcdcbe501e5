"""pipecat bots over pipecat's WebSocket transport: frames, RTVI messages, text turns.

The transport (:mod:`.connector`) is apart from the encoding (:mod:`.frames`,
:mod:`.messages`, :mod:`.rtvi`), as in pipecat's own serializers. Imports only
the connector seam (``connectors.base``, ``options``, ``capabilities``).
"""
