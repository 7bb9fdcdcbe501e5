"""``pytest --vae-suite``: the pytest plugin, its collection, and the one vae run it makes.

May import ``cli.runs`` and below; the plugin module itself imports nothing
heavy, since pytest loads it in every environment vae is installed in.
"""
