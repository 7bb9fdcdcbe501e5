"""pipecat bots over pipecat's WebSocket transport: frames, RTVI messages, text turns.

The transport (:mod:`.connector`) is apart from the encoding (:mod:`.frames`,
:mod:`.inbound`), as in pipecat's own serializers; what the RTVI messages
mean (:mod:`.conversation`, :mod:`.messages`, :mod:`.rtvi`,
:mod:`.rtvi_calls`, :mod:`.text`) is apart from both, so the WebRTC connector
(``connectors.webrtc``) holds the same conversation. Imports only the
connector seam (``connectors.base``, ``options``, ``capabilities``).
"""
