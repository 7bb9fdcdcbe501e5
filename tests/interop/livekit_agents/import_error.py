"""A LiveKit agent file that raises while it is imported (a dependency it cannot load)."""

from livekit.agents import AgentServer

server = AgentServer()
raise ImportError("import_error agent: the package 'restaurant_model' is not installed")
