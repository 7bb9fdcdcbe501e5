"""The gRPC edge of the scorer: the ScorerService servicer, its server, and protobuf conversion.

The only scorer package that touches ``*_pb2``; it may import everything
else of the scorer.
"""
