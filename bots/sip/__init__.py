"""The reference bots' SIP side: ``vae bot agent --sip-listen HOST:PORT`` answers calls.

A bridge that calls an agent over SIP (``--agent-connector sip:...``) reaches
vae's own agent here. Each call is one session played by the same
:class:`vae.bots.client.BotStream` as over gRPC: :mod:`.line` turns the call
into the stream's messages (RTP audio resampled to the bot's rates, RFC 4733
keys, the bridge's control messages from INFO) and the bot's messages back
(its voice as G.711 RTP, its events and final state as INFO), so the brains
cannot tell the difference. :mod:`.serve` answers every call (any user part,
any number at once). Imports only ``vae`` (the contract, ``vae.sip``) and the
bots' own code.
"""
