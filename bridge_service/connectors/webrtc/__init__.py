"""pipecat bots over pipecat's SmallWebRTC transport: vae is the WebRTC client (aiortc).

The transport (:mod:`.signalling`, the offer posted over HTTP; :mod:`.media`,
the audio tracks; :mod:`.connector`, the peer connection and data channel) is
apart from the encoding, which is the pipecat connector's: the RTVI
conversation (``pipecat.conversation``) and its audio helpers
(``pipecat.audio``). aiortc is the ``webrtc`` extra, imported only here.
"""
