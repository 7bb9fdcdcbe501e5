"""``vae demo``: the whole product in one command, offline, on the embedded defaults.

The top of the CLI: may import runs, scoring, gate and the shared helpers.
"""
