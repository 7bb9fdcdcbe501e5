"""The store's schema migrations, in order: a name and its SQL each; data only.

This table grows by one entry each time the store's schema changes, and
nothing else lives here: how the migrations are checked and applied, each in
one transaction with the row that records it, is
:mod:`vae.recordings.backends.migrations`. An entry is never edited or
reordered once released (a store records the names it has applied); a change
is a new entry at the end. The DDL is the portable subset SQLite and
PostgreSQL share (:mod:`vae.recordings.backends.dialect` maps the types).
"""

NAMED_MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_recordings",
        """
        CREATE TABLE runs (
          run_id TEXT PRIMARY KEY,
          created_ns INTEGER NOT NULL,
          finished_ns INTEGER,
          status TEXT NOT NULL,
          options_json TEXT NOT NULL DEFAULT '{}',
          vae_version TEXT NOT NULL,
          tags_json TEXT NOT NULL DEFAULT '[]',
          source TEXT NOT NULL DEFAULT 'bridge'
        );
        CREATE TABLE run_scenarios (
          run_id TEXT NOT NULL REFERENCES runs(run_id),
          scenario_name TEXT NOT NULL,
          ordinal INTEGER NOT NULL,
          domain TEXT NOT NULL DEFAULT '',
          scenario_json TEXT NOT NULL,
          PRIMARY KEY (run_id, scenario_name)
        );
        CREATE TABLE sessions (
          session_id TEXT PRIMARY KEY,
          run_id TEXT NOT NULL REFERENCES runs(run_id),
          scenario_name TEXT NOT NULL,
          attempt INTEGER NOT NULL,
          status TEXT NOT NULL,
          started_ns INTEGER NOT NULL,
          ended_ns INTEGER,
          stop_reason TEXT,
          stop_detail TEXT NOT NULL DEFAULT '',
          clean_exit INTEGER,
          user_turns INTEGER NOT NULL DEFAULT 0,
          agent_turns INTEGER NOT NULL DEFAULT 0,
          user_bot_json TEXT NOT NULL DEFAULT '{}',
          agent_bot_json TEXT NOT NULL DEFAULT '{}',
          audio_json TEXT NOT NULL DEFAULT '{}',
          retry_reason TEXT NOT NULL DEFAULT '',
          superseded_reason TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX sessions_by_run ON sessions(run_id, scenario_name, attempt);
        CREATE TABLE audio_segments (
          session_id TEXT NOT NULL REFERENCES sessions(session_id),
          channel TEXT NOT NULL,
          seq INTEGER NOT NULL,
          start_offset INTEGER NOT NULL,
          sample_count INTEGER NOT NULL,
          sample_rate INTEGER NOT NULL,
          first_arrival_ns INTEGER NOT NULL,
          frames BLOB NOT NULL,
          pcm BLOB NOT NULL,
          PRIMARY KEY (session_id, channel, seq)
        );
        CREATE TABLE events (
          id INTEGER PRIMARY KEY,
          session_id TEXT NOT NULL REFERENCES sessions(session_id),
          side TEXT NOT NULL,
          kind TEXT NOT NULL,
          bridge_ns INTEGER NOT NULL,
          bot_ns INTEGER NOT NULL DEFAULT 0,
          payload_json TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX events_by_session ON events(session_id, bridge_ns);
        CREATE TABLE final_states (
          session_id TEXT NOT NULL REFERENCES sessions(session_id),
          side TEXT NOT NULL,
          received_ns INTEGER NOT NULL,
          state_json TEXT,
          state_hash TEXT,
          context_json TEXT,
          PRIMARY KEY (session_id, side)
        );
        """,
    ),
    (
        "0002_scoring",
        """
        CREATE TABLE scorings (
          scoring_id TEXT PRIMARY KEY,
          run_id TEXT NOT NULL REFERENCES runs(run_id),
          created_ns INTEGER NOT NULL,
          finished_ns INTEGER,
          status TEXT NOT NULL,
          mode TEXT NOT NULL DEFAULT 'append',
          config_json TEXT NOT NULL,
          versions_json TEXT NOT NULL DEFAULT '{}',
          judge_model TEXT NOT NULL DEFAULT '',
          prompt_hash TEXT NOT NULL DEFAULT '',
          superseded_by TEXT,
          summary_json TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX scorings_by_run ON scorings(run_id, created_ns);
        CREATE TABLE scores (
          scoring_id TEXT NOT NULL REFERENCES scorings(scoring_id),
          session_id TEXT NOT NULL REFERENCES sessions(session_id),
          signal TEXT NOT NULL,
          verdict TEXT NOT NULL,
          value REAL,
          passed INTEGER,
          detail_json TEXT NOT NULL DEFAULT '{}',
          error TEXT NOT NULL DEFAULT '',
          PRIMARY KEY (scoring_id, session_id, signal)
        );
        CREATE TABLE judge_cache (
          cache_key TEXT PRIMARY KEY,
          model TEXT NOT NULL,
          request_json TEXT NOT NULL,
          response_json TEXT NOT NULL,
          created_ns INTEGER NOT NULL
        );
        """,
    ),
    (
        "0003_artifacts",
        """
        CREATE TABLE artifacts (
          id INTEGER PRIMARY KEY,
          run_id TEXT NOT NULL REFERENCES runs(run_id),
          session_id TEXT REFERENCES sessions(session_id),
          name TEXT NOT NULL,
          content TEXT NOT NULL
        );
        CREATE INDEX artifacts_by_run ON artifacts(run_id, session_id);
        """,
    ),
    (
        "0004_run_error",
        # Why a run failed (an exception while running it, a shutdown, scenarios
        # left unfinished): shown by `vae run`, WatchRun and `vae runs show`.
        """
        ALTER TABLE runs ADD COLUMN error TEXT NOT NULL DEFAULT ''
        """,
    ),
    (
        "0007_session_clock",
        """
        ALTER TABLE sessions ADD COLUMN clock_json TEXT;
        """,
    ),
    (
        "0009_replayed_from",
        """
        ALTER TABLE runs ADD COLUMN replayed_from TEXT;
        ALTER TABLE sessions ADD COLUMN replayed_from TEXT;
        """,
    ),
    (
        "0010_labels",
        # Human labels (vae.recordings.labels): a person's verdict on a session, a signal
        # (`signal`) or an NL assertion (`assertion`, its index; -1 otherwise). Only
        # ever added; labels_once makes importing the same label twice a no-op.
        """
        CREATE TABLE labels (
          id INTEGER PRIMARY KEY,
          run_id TEXT NOT NULL REFERENCES runs(run_id),
          session_id TEXT NOT NULL REFERENCES sessions(session_id),
          kind TEXT NOT NULL,
          signal TEXT NOT NULL DEFAULT '',
          assertion INTEGER NOT NULL DEFAULT -1,
          assertion_text TEXT NOT NULL DEFAULT '',
          verdict TEXT NOT NULL,
          note TEXT NOT NULL DEFAULT '',
          labeller TEXT NOT NULL,
          created_ns INTEGER NOT NULL
        );
        CREATE INDEX labels_by_run ON labels(run_id, session_id);
        CREATE UNIQUE INDEX labels_once ON labels(session_id, kind, signal, assertion, labeller,
          created_ns)
        """,
    ),
    (
        "0011_session_bridge",
        # Which bridge process served each attempt (host, pid, address, worker):
        # a JSON object, shown by `vae runs show` and GetRun.
        """
        ALTER TABLE sessions ADD COLUMN bridge_json TEXT
        """,
    ),
    (
        "0012_session_jobs",
        # Several bridges sharing one PostgreSQL store serve a run together
        # (recordings/write/session_jobs.py): the attempts waiting for a bridge with a
        # free pair of bots, claimed with FOR UPDATE SKIP LOCKED; each bridge's
        # heartbeat, by which the others tell a live claimer from a dead one.
        """
        CREATE TABLE session_jobs (
          session_id TEXT PRIMARY KEY,
          run_id TEXT NOT NULL,
          owner TEXT NOT NULL,
          plan_json TEXT NOT NULL,
          modality TEXT NOT NULL,
          clock TEXT NOT NULL,
          state TEXT NOT NULL,
          enqueued_ns INTEGER NOT NULL,
          claimed_by TEXT NOT NULL DEFAULT '',
          bridge_json TEXT NOT NULL DEFAULT '',
          end_reason TEXT NOT NULL DEFAULT '',
          end_detail TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX session_jobs_by_state ON session_jobs(state, enqueued_ns);
        CREATE INDEX session_jobs_by_owner ON session_jobs(owner);
        CREATE TABLE bridge_beats (
          bridge_id TEXT PRIMARY KEY,
          bridge_json TEXT NOT NULL,
          beat INTEGER NOT NULL
        )
        """,
    ),
    (
        "0013_session_modality",
        # How the session's bots talked (audio or text) and on which clock
        # (real or virtual): `vae runs show`, the report and the scorer's
        # modality rule read them. Sessions recorded before were audio, real time.
        """
        ALTER TABLE sessions ADD COLUMN modality TEXT NOT NULL DEFAULT 'audio';
        ALTER TABLE sessions ADD COLUMN clock TEXT NOT NULL DEFAULT 'real';
        """,
    ),
    (
        "0014_transcripts",
        # A scoring's transcription stage (vae rescore --transcribe): per-turn text of
        # the recorded channels, a layer beside the bots' own transcripts, and the
        # engine's answers cached by engine configuration and audio.
        """
        CREATE TABLE transcripts (
          scoring_id TEXT NOT NULL REFERENCES scorings(scoring_id),
          session_id TEXT NOT NULL REFERENCES sessions(session_id),
          channel TEXT NOT NULL,
          turn INTEGER NOT NULL,
          start_s REAL NOT NULL,
          end_s REAL NOT NULL,
          text TEXT NOT NULL DEFAULT '',
          error TEXT NOT NULL DEFAULT '',
          cached INTEGER NOT NULL DEFAULT 0,
          PRIMARY KEY (scoring_id, session_id, channel, turn)
        );
        CREATE TABLE transcription_cache (
          cache_key TEXT PRIMARY KEY,
          engine TEXT NOT NULL,
          config_json TEXT NOT NULL,
          text TEXT NOT NULL,
          created_ns INTEGER NOT NULL
        );
        """,
    ),
    (
        "0015_session_caller",
        # Who the caller was (issue 25): the voice, language, behaviours and
        # voicemail mode the scenario's user section asked for, resolved, as JSON
        # (`vae runs show`, the report). NULL: the user bot's own voice.
        """
        ALTER TABLE sessions ADD COLUMN caller_json TEXT;
        """,
    ),
    (
        "0016_session_line",
        # The phone line the caller's audio went through (codec, packet loss,
        # jitter, gain, clipping, noise; its seed and how many packets were lost):
        # a JSON object, shown by `vae runs show` and the report. NULL: a clean line.
        """
        ALTER TABLE sessions ADD COLUMN line_json TEXT
        """,
    ),
    (
        "0017_redaction",
        # Redaction of personal data (recordings/redact/): each pass over a run
        # (recorded, imported, copied or rewritten redacted: its configuration and
        # counts), and its ledger: what was redacted where (type, field, channel,
        # time span, how), never the value.
        """
        CREATE TABLE redactions (
          id INTEGER PRIMARY KEY,
          run_id TEXT NOT NULL,
          mode TEXT NOT NULL,
          created_ns INTEGER NOT NULL,
          fingerprint TEXT NOT NULL,
          config_json TEXT NOT NULL,
          summary_json TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX redactions_by_run ON redactions(run_id);
        CREATE TABLE redaction_ledger (
          id INTEGER PRIMARY KEY,
          run_id TEXT NOT NULL,
          session_id TEXT,
          location TEXT NOT NULL,
          entity TEXT NOT NULL,
          channel TEXT NOT NULL DEFAULT '',
          start_s REAL,
          end_s REAL,
          method TEXT NOT NULL DEFAULT 'text',
          note TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX redaction_ledger_by_run ON redaction_ledger(run_id, session_id)
        """,
    ),
    (
        "0018_traces_and_cost",
        # OpenTelemetry in and out, and cost (issue 35): the agent's spans received over
        # OTLP, each tied to a session (or kept unmatched under its run) with how it was
        # matched; and each export of vae's own trace to a collector (spans sent, dropped).
        # (The judge's usage, for cost, is kept in JUDGE_PASSED's detail.)
        """
        CREATE TABLE agent_spans (
          id INTEGER PRIMARY KEY,
          run_id TEXT NOT NULL,
          session_id TEXT,
          trace_id TEXT NOT NULL,
          span_id TEXT NOT NULL,
          parent_span_id TEXT NOT NULL DEFAULT '',
          name TEXT NOT NULL,
          kind TEXT NOT NULL DEFAULT '',
          service TEXT NOT NULL DEFAULT '',
          start_ns INTEGER NOT NULL,
          end_ns INTEGER NOT NULL,
          status TEXT NOT NULL DEFAULT '',
          attributes_json TEXT NOT NULL DEFAULT '{}',
          resource_json TEXT NOT NULL DEFAULT '{}',
          matched_by TEXT NOT NULL,
          received_ns INTEGER NOT NULL
        );
        CREATE INDEX agent_spans_by_session ON agent_spans(run_id, session_id, start_ns);
        CREATE TABLE otel_exports (
          id INTEGER PRIMARY KEY,
          run_id TEXT NOT NULL,
          scoring_id TEXT NOT NULL DEFAULT '',
          endpoint TEXT NOT NULL,
          spans INTEGER NOT NULL,
          dropped INTEGER NOT NULL,
          error TEXT NOT NULL DEFAULT '',
          elapsed_s REAL NOT NULL DEFAULT 0,
          created_ns INTEGER NOT NULL
        );
        CREATE INDEX otel_exports_by_run ON otel_exports(run_id, created_ns)
        """,
    ),
)
