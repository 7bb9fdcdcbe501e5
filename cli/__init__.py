"""The ``vae`` command line: each command a thin call into a service or the store."""
