"""Commands on scorings: ``vae rescore``, ``vae scores``, ``vae compare``, ``vae report``.

May import ``cli.gate``, ``cli.labels`` and the shared helpers.
"""
