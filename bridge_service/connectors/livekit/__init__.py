"""LiveKit Agents in console mode: one agent process per session, vae as its TCP peer.

The transport (:mod:`.dial` and :mod:`.process`, the agent's process;
:mod:`.connector`, the endpoint; :mod:`.playback`, the console's speaker;
:mod:`.folder`, the session's files) is apart from the encoding (:mod:`.wire`,
length-prefixed ``AgentSessionMessage`` protobufs decoded with livekit's own
generated classes; :mod:`.inbound` and :mod:`.events`, what they mean to vae). Imports the
connector seam, and the audio helpers of the pipecat and Twilio connectors
(``pipecat.audio``, ``twilio.playout``).
"""
