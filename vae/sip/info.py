"""vae's own INFO packages (RFC 6086): the session's control messages beside the call's audio.

A SIP agent that knows vae can take part in a session the way a gRPC bot
does: it lists ``vae-bridge`` in ``Recv-Info`` (in its 200 OK, or in the
INVITE it sends to vae) and then receives, as INFO requests of that package,
the bridge's messages of ``vae.bridge.v1.BridgeMessage`` in protobuf JSON
(``session_start``, ``peer_event``, ``state_sync``, ``notice``,
``session_ending``, ``session_ended``); it sends its own as INFO of the
``vae-bot`` package, ``vae.bridge.v1.BotMessage`` in protobuf JSON
(``event``: transcripts, tool calls, its end tool, ...; ``final_state`` in
chunks of at most :data:`MAX_CHUNK` bytes). Audio and keys never travel this
way: they are RTP. An agent that lists neither package is called as any
phone agent: audio and keys only, its hang-up is its BYE.
"""

from __future__ import annotations

#: Bridge -> bot (``BridgeMessage``), taken by agents that list it in Recv-Info.
BRIDGE_PACKAGE = "vae-bridge"
#: Bot -> bridge (``BotMessage``), taken by vae (listed in its Recv-Info).
BOT_PACKAGE = "vae-bot"
CONTENT_TYPE = "application/vnd.vae.v1+json"
#: Largest JSON chunk of a final state in one INFO (the message stays well under a datagram).
MAX_CHUNK = 16 * 1024
