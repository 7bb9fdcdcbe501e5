"""pipecat bots over pipecat's WebSocket transport: frames, RTVI messages, text turns.

The transport (:mod:`.connector`) is apart from the encoding (:mod:`.frames`,
:mod:`.messages`, :mod:`.inbound`, :mod:`.rtvi`, :mod:`.rtvi_calls`), as in
pipecat's own serializers. Imports only the connector seam
(``connectors.base``, ``options``, ``capabilities``).
"""
