"""vae: record, replay and re-score conversations between two voice bots.

This package holds the wire contract generated from ``protos/`` (``vae.common.v1``,
``vae.bridge.v1``, ``vae.scorer.v1``) and the distribution's version.
"""

__version__ = "0.1.0"
