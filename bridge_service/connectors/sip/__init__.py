"""SIP phone agents: the bridge calls them (``sip:``) and takes their calls (``sip-inbound:``).

The protocol itself (transport, transactions, dialogs, SDP, RTP, digest) is
``vae.sip``, shared with the reference bots; here is only what makes a call a
side of a session: the target URL (:mod:`.target`), the options
(:mod:`.options`), how a refused call becomes a stop reason
(:mod:`.refusals`), the session's side over a call (:mod:`.endpoint`),
calling out (:mod:`.outbound`) and the listener that takes calls
(:mod:`.inbound`). The session's control messages travel as protobuf JSON in
SIP INFO: converting them is the gRPC edge's (``edge/sip_wire.py``), which is
also where the two kinds are registered (``connectors.base``). Imports only
the connector seam and ``vae.sip``.
"""
