"""Tools a scenario declares, with one meaning everywhere: the contract's tool world.

Why beside the contract: the reference agent (a bot, which may import only
``vae``) and the tool backend the bridge serves per session
(:mod:`vae.bridge_service.tools`) must run a scenario's tools identically, and
the scorer checks tool calls against the same matching rules. So the pure
logic lives here, with no I/O and no service import:

- :mod:`.jsondb`: ``tool_effects`` on a JSON DB;
- :mod:`.match`: expected arguments against actual ones (``{min, max}``,
  ``{regex}``, ``{date}`` matchers), for ``tool_responses`` and
  ``tool_call_expectations``;
- :mod:`.spec`: a side's tools as declared (arguments, types, required ones);
- :mod:`.world`: one session's tools and DB, answering calls (checks, the
  scenario's canned answers, effects);
- :mod:`.client`: where a backend is, and calling it over HTTP.
"""
