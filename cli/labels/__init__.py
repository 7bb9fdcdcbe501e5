"""Human labels: ``vae label``, ``vae labels``, ``vae scores agree`` and ``vae review``.

May import ``cli.common`` and ``cli.tables`` only.
"""
