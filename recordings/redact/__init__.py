"""Redacted recordings: the store's half of keeping personal data out of it.

The detection itself (presidio's recognisers, spoken forms, placeholders,
tone masks) is :mod:`vae.redaction`, which the store never imports: every
function here takes it as a :class:`~vae.recordings.redact.model.Redaction`
— plain callables over strings, JSON values and samples. What lives here is
what only the store knows:

- ``model`` — that protocol, and a ledger entry (what was redacted where,
  never the value);
- ``ledger`` — the ``redactions`` and ``redaction_ledger`` rows, written and read;
- ``session_mask`` — which spans of which channel to mask in a session, from
  its transcripts (word timings, a turn's times, or its voice activity) and
  its key presses, and the masked segments;
- ``live`` — the writer's filter (:mod:`vae.recordings.write.privacy`) that
  redacts a run as it is recorded or imported: nothing personal reaches disk;
- ``tables`` — every table and column of a run, and how each is redacted;
- ``rewrite`` — a stored run redacted into a new store, or in place (then
  rewritten and vacuumed, so no page or WAL frame keeps the original).
"""
