"""The gRPC edge of the bridge: the BridgeService servicers and protobuf <-> domain conversion.

The only bridge package (with ``workers``' and ``replay``'s convert modules)
that touches ``*_pb2``. May import runs, replay, audio, config and the
connector seam; the server that binds it is :mod:`vae.bridge_service.server`.
"""
