"""Reference bots: gRPC clients of the bridge that import only the contract (``vae.*.v1``).

A bot is a client like one written in any other language: ``sound`` (mouth
and ears), ``brains`` (scripted and LLM-driven sides), ``stand_in`` (offline
stand-ins for an LLM endpoint), and the wire: ``messages`` (what a bot
sends and reads), ``client`` (one Converse stream), ``line`` (a side in each
tier), ``runner``, ``preflight``; and ``sip``, the same sessions answered as
SIP calls (``vae bot agent --sip-listen``).

Layers, bottom to top (a unit imports only from its own layer or below;
``tests/test_import_direction.py`` holds the code to this list):

1. sound, stand_in, preflight
2. brains
3. messages, line, client, runner
4. sip
"""
