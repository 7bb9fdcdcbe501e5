"""Reference bots: gRPC clients of the bridge that import only the contract (``vae``)."""
