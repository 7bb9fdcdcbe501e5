"""The tool backend: a session's agent tools, served by the bridge on loopback.

A real agent calls its own APIs, so vae could neither see its world's final
state nor keep its tests off live systems. With ``vae run --tool-backend``
(or a scenario's ``tool_backend: true``) each session gets its own server
implementing the scenario's tools (``resources.tools``, ``tool_effects``,
``tool_responses``; the semantics are :mod:`vae.tools.world`, shared with the
reference agent) over the agent's initial DB:

- :mod:`.http`: ``POST /tools/NAME`` (JSON in, JSON out) and
  ``GET /openapi.json`` (:mod:`.openapi`, generated from the scenario);
- :mod:`.mcp_server`: the same tools as an MCP server (streamable HTTP);
- :mod:`.backend`: one session's server, every call recorded as a
  ``tool_backend_call`` event;
- :mod:`.session`: starting it for a session (its addresses reach the agent
  in ``SessionStart.tool_backend``) and, at the end, storing its DB as the
  agent's final state.

The servers need the ``tools`` extra (``mcp``, which brings starlette and
uvicorn); :func:`~.session.check_run` refuses a run that asks for a backend
without it, naming ``pip install 'vae[tools]'``.
"""
