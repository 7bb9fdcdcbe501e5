"""Commands on scenario files: ``vae validate`` and ``vae schema``.

May import ``cli.common`` only.
"""
