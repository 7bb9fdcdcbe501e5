"""Scenarios: the model, its one JSON Schema, parsing and checking, and reading sources.

One home for everything about the scenario format (docs/scenarios.md):

- :mod:`.model` and :mod:`.parts`: the dataclasses (what the store freezes
  with a run and the scorer reads back, without a YAML parser);
- :mod:`.parse` and :mod:`.check`: a document into a model, every problem named;
- :mod:`.schema` and :mod:`.docs`: the JSON Schema generated from the model;
- :mod:`.sources`: the kinds of source (files, folders, inline text, Python
  modules) and how each is read; :mod:`.hooks`: importing a sync hook;
- :mod:`.lint`: every problem of every source in one pass, with positions,
  and :func:`~.lint.load_sources`, the one loader everything calls.
"""
