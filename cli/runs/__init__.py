"""Commands on runs: ``vae run``, ``vae runs``, ``vae export``, ``vae import``.

May import ``cli.scoring``, ``cli.gate``, ``cli.scenarios`` and the shared helpers.
"""
