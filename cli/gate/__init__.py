"""``vae gate`` and the gate options that ``vae run``, ``vae rescore`` and ``vae demo`` share.

May import only ``cli.common`` and the scorer's gate (``vae.scorer_service.gate``).
"""
