"""Long-running processes: ``vae bridge|scorer|judge serve`` and ``vae bot``.

May import ``cli.common`` only; each starts a service or a bot in the foreground.
"""
