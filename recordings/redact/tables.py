"""Every table of the store, and how each of its columns is redacted: one table of truth.

Why a table: "nothing of the original remains" is only as good as the list of
places the original can be. Every column of every table is named here —
``tests/recordings/redact/test_tables.py`` fails when a migration adds one
that is not — with what a redaction does to it:

- ``key``: an identifier or a closed vocabulary (ids, sides, kinds, statuses),
  kept; run ids, session ids and scenario names are identifiers, so a run
  must not be named after a person (the docs say so);
- ``text``: placeholders in the string;
- ``json``: placeholders in every string (and key) of the document;
- ``pcm``: masked where the session's transcripts found personal data;
- ``hash``: recomputed from the redacted document beside it;
- ``keep``: numbers, times, the frame-timing index.

Tables of a run are read by how their rows belong to it (``scope``): its
``run_id``, one of its sessions, or one of its scorings. The caches are
global: a cached judge request or transcription holding personal data is
deleted, never kept (its key hashes the original).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    name: str
    #: "run" (run_id = ?), "session" (one of the run's sessions), "scoring" (one of its scorings).
    scope: str
    columns: dict[str, str]

    @property
    def stored(self) -> list[str]:
        """Columns copied (an ``id`` is given anew by the database it is copied into)."""
        return [c for c in self.columns if c != "id"]


K, T, J = "key", "text", "json"

#: Parents before children: the order rows are copied in (deleted in reverse).
RUN_TABLES: tuple[Table, ...] = (
    Table("runs", "run", {"run_id": K, "created_ns": "keep", "finished_ns": "keep", "status": K,
                          "options_json": J, "vae_version": K, "tags_json": J, "source": K,
                          "error": T, "replayed_from": K}),
    Table("run_scenarios", "run", {"run_id": K, "scenario_name": K, "ordinal": "keep",
                                   "domain": T, "scenario_json": J}),
    Table("sessions", "run", {"session_id": K, "run_id": K, "scenario_name": K, "attempt": "keep",
                              "status": K, "started_ns": "keep", "ended_ns": "keep",
                              "stop_reason": K, "stop_detail": T, "clean_exit": "keep",
                              "user_turns": "keep", "agent_turns": "keep", "user_bot_json": J,
                              "agent_bot_json": J, "audio_json": J, "retry_reason": T,
                              "superseded_reason": T, "clock_json": J, "replayed_from": K,
                              "bridge_json": J, "modality": K, "clock": K, "caller_json": J,
                              "line_json": J}),
    Table("scorings", "run", {"scoring_id": K, "run_id": K, "created_ns": "keep",
                              "finished_ns": "keep", "status": K, "mode": K, "config_json": J,
                              "versions_json": J, "judge_model": K, "prompt_hash": K,
                              "superseded_by": K, "summary_json": J}),
    Table("audio_segments", "session", {"session_id": K, "channel": K, "seq": "keep",
                                        "start_offset": "keep", "sample_count": "keep",
                                        "sample_rate": "keep", "first_arrival_ns": "keep",
                                        "frames": "keep", "pcm": "pcm"}),
    Table("events", "session", {"id": K, "session_id": K, "side": K, "kind": K,
                                "bridge_ns": "keep", "bot_ns": "keep", "payload_json": J}),
    Table("final_states", "session", {"session_id": K, "side": K, "received_ns": "keep",
                                      "state_json": J, "state_hash": "hash", "context_json": J}),
    Table("transcripts", "scoring", {"scoring_id": K, "session_id": K, "channel": K,
                                     "turn": "keep", "start_s": "keep", "end_s": "keep",
                                     "text": T, "error": T, "cached": "keep"}),
    Table("scores", "scoring", {"scoring_id": K, "session_id": K, "signal": K, "verdict": K,
                                "value": "keep", "passed": "keep", "detail_json": J,
                                "error": T}),
    Table("artifacts", "run", {"id": K, "run_id": K, "session_id": K, "name": K, "content": T}),
    Table("labels", "run", {"id": K, "run_id": K, "session_id": K, "kind": K, "signal": K,
                            "assertion": "keep", "assertion_text": T, "verdict": K, "note": T,
                            "labeller": K, "created_ns": "keep"}),
    Table("session_jobs", "run", {"session_id": K, "run_id": K, "owner": K, "plan_json": J,
                                  "modality": K, "clock": K, "state": K, "enqueued_ns": "keep",
                                  "claimed_by": K, "bridge_json": J, "end_reason": K,
                                  "end_detail": T}),
    # The agent's spans (OTLP in): a span's attributes hold what was said and heard.
    Table("agent_spans", "run", {"id": K, "run_id": K, "session_id": K, "trace_id": K,
                                 "span_id": K, "parent_span_id": K, "name": T, "kind": K,
                                 "service": T, "start_ns": "keep", "end_ns": "keep",
                                 "status": T, "attributes_json": J, "resource_json": J,
                                 "matched_by": K, "received_ns": "keep"}),
    Table("otel_exports", "run", {"id": K, "run_id": K, "scoring_id": K, "endpoint": K,
                                  "spans": "keep", "dropped": "keep", "error": T,
                                  "elapsed_s": "keep", "created_ns": "keep"}),
    # The redaction's own rows hold no values: copied as they are.
    Table("redactions", "run", {"id": K, "run_id": K, "mode": K, "created_ns": "keep",
                                "fingerprint": K, "config_json": K, "summary_json": K}),
    Table("redaction_ledger", "run", {"id": K, "run_id": K, "session_id": K, "location": K,
                                      "entity": K, "channel": K, "start_s": "keep",
                                      "end_s": "keep", "method": K, "note": K}),
)  # fmt: skip

#: Tables of no run: "purge" deletes rows whose text columns hold personal data.
GLOBAL_TABLES: dict[str, dict[str, str]] = {
    "schema_migrations": {"id": K, "name": K, "applied_ns": "keep"},
    "bridge_beats": {"bridge_id": K, "bridge_json": K, "beat": "keep"},
    "judge_cache": {"cache_key": K, "model": K, "request_json": "purge",
                    "response_json": "purge", "created_ns": "keep"},
    "transcription_cache": {"cache_key": K, "engine": K, "config_json": K, "text": "purge",
                            "created_ns": "keep"},
}  # fmt: skip


def where(table: Table) -> str:
    """The condition selecting ``table`` 's rows of one run (one ``?``: the run id)."""
    if table.scope == "session":
        return "session_id IN (SELECT session_id FROM sessions WHERE run_id = ?)"
    if table.scope == "scoring":
        return "scoring_id IN (SELECT scoring_id FROM scorings WHERE run_id = ?)"
    return "run_id = ?"
