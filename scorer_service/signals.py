"""Names of everything the scorer stores in ``scores.signal``.

One place, so the reports, the CLI and other languages agree on spelling.
Every score's ``detail`` (``detail_json``) explains its verdict; the keys each
signal stores are listed beside it.

Success signals (the scenario's ``success_signals`` choose which gate the
composites):

- ``ACTION_MATCH`` — reference answer vs recorded write actions. detail:
  ``reference``, ``prediction``, ``strict``, ``reason``.
- ``DB_STATE_MATCH`` — canonical hash of each side's final state vs the
  expected DB. detail: ``sides`` {side: {expected_hash, actual_hash, match,
  diff[]}}.
- ``DB_STATE_ASSERTION`` — declarative assertions and named predicates over the
  final state. value: pass rate. detail: ``verdicts`` [{index, side, path|func_name,
  op, expected, actual, passed, error, message}].
- ``NL_ASSERTION`` — natural-language assertions judged by the LLM judge.
  value: pass rate. detail: ``verdicts`` [{index, assertion, passed, reason}].
- ``JUDGE_PASSED`` — the judge's overall score >= threshold. value: score.
  detail: ``reason``, ``threshold``, ``model``, ``prompt_hash``, ``cached``.
- ``CLEAN_EXIT`` — the session ended as the end policy requires. detail:
  ``stop_reason``, ``end_policy``.
- ``HEARD_CORRECTLY`` — what the caller said against what the agent heard
  (non-gating unless a scenario lists it). value: 1 − WER over the session;
  failed on any critical mismatch (a date, number, code or name said one way
  and heard another); unscored ``no_heard_transcript`` / ``no_said_transcript``
  / ``asr_error``. detail: ``speaker``, ``listener``, ``said_source``,
  ``heard_source`` (bots | asr), ``wer``, ``words``, ``substitutions``,
  ``deletions``, ``insertions``, ``mismatches`` [{turn, kind, said, heard,
  said_value, heard_value}], ``turns`` [{t_s, said, heard, said_marks,
  heard_marks, words, errors}], ``reason``.

- ``DTMF_RECEIVED`` — the keypad digits the agent reported hearing against
  those the caller keyed (non-gating unless a scenario lists it). value: the
  share of keyed digits heard in place; failed when they differ; not_applicable
  when the caller keyed nothing; unscored ``no_dtmf_report`` when the agent
  reported no digits at all (an agent that does not report cannot be judged),
  ``not_delivered`` when the bridge could not carry the keys. detail:
  ``sent``, ``heard``, ``carried_as``, ``presses`` [{side, digits, t_s}], ``reason``.

- ``TOOL_CALLS`` — the scenario's ``tool_call_expectations`` against the
  calls the session's tool backend served (``source: backend``), else the
  calls the agent reported (``source: reported``; unscored
  ``no_tool_evidence`` when it reported none). value: share of expectations
  met. detail: ``source``, ``calls``, ``reason``, ``expectations`` [{index,
  tool, kind (called | not_called | arguments | times | order), argument
  (when the kind has one), passed, reason, calls, message}].
- ``CLAIMED_NOT_DONE`` — the agent reported a tool call (ToolCall event) that
  the tool backend never served, or reported as done one the backend refused.
  Not applicable without a backend or without reported calls. value: the
  number of such claims. detail: ``claims`` [{name, arguments, t_s, served,
  served_status, reason}], ``reason``.

A failing gating signal whose failing value matches a critical mismatch
carries ``misheard`` in its detail ({text, said, heard, kind, turn}): the
session's reason then names the mishearing first.

Composites (never in a scenario's success_signals):

- ``is_successful`` — strict AND over the scenario's success signals: failed
  if any failed, else unscored if any is unscored or missing (detail
  ``causes``), else passed; unscored for an unfinished attempt; fails when the
  session stalled (0 conversation turns, or too few agent turns).
- ``is_task_successful`` — the same without CLEAN_EXIT.

Informational signals (verdict ``not_applicable`` unless stated; the number is
``value``):

- ``stalled`` — verdict failed when a finished attempt had 0 conversation
  turns, or the agent answered fewer than ``min_agent_turns`` times (detail
  ``reason``); passed otherwise, not_applicable when ``min_agent_turns`` is
  off; unscored (cause ``unfinished: …``) for an attempt that did not finish.
- ``timing.*`` — measured from the recorded audio (see :data:`TIMING_METRICS`);
  detail holds ``detector``, ``detector_options``, ``metric_version`` and the
  per-event lists behind the figure.
- ``bot.<side>.<name>`` — a bot-reported metric (mean over the session);
  detail: ``count``, ``values``, ``unit``, ``component``.
- ``tokens.<side>.prompt`` / ``.completion`` / ``.calls`` — token usage per side.
- ``bot_errors`` — errors the bots reported during the call (value: count;
  detail ``errors``: ``"<side>: <message>"`` lines). Only when there are some.
- ``transcription.wer`` — with a transcription stage: the transcription of
  each side's channel against what that side's bot reported saying (value:
  WER; detail ``engine``, ``words``, ``errors``, ``turns``, ``failed_turns``).
"""

from __future__ import annotations

ACTION_MATCH = "ACTION_MATCH"
DB_STATE_MATCH = "DB_STATE_MATCH"
DB_STATE_ASSERTION = "DB_STATE_ASSERTION"
NL_ASSERTION = "NL_ASSERTION"
JUDGE_PASSED = "JUDGE_PASSED"
CLEAN_EXIT = "CLEAN_EXIT"
HEARD_CORRECTLY = "HEARD_CORRECTLY"
DTMF_RECEIVED = "DTMF_RECEIVED"
TOOL_CALLS = "TOOL_CALLS"
CLAIMED_NOT_DONE = "CLAIMED_NOT_DONE"

#: The signals a scenario may gate on, in display order.
SUCCESS_SIGNALS = (
    ACTION_MATCH,
    DB_STATE_MATCH,
    DB_STATE_ASSERTION,
    NL_ASSERTION,
    JUDGE_PASSED,
    CLEAN_EXIT,
    HEARD_CORRECTLY,
    DTMF_RECEIVED,
    TOOL_CALLS,
    CLAIMED_NOT_DONE,
)

IS_SUCCESSFUL = "is_successful"
IS_TASK_SUCCESSFUL = "is_task_successful"
COMPOSITES = (IS_SUCCESSFUL, IS_TASK_SUCCESSFUL)

STALLED = "stalled"
#: Informational: errors the bots reported during the call (detail ``errors``).
BOT_ERRORS = "bot_errors"

TIMING_PREFIX = "timing."
#: Informational: the transcription stage against the bots' own transcripts.
TRANSCRIPTION_WER = "transcription.wer"
BOT_METRIC_PREFIX = "bot."
TOKENS_PREFIX = "tokens."

#: Timing metric names (all in seconds unless the name says rate/share/count).
TIMING_METRICS = (
    "timing.response_latency_mean_s",
    "timing.response_latency_p50_s",
    "timing.response_latency_p90_s",
    "timing.response_latency_p95_s",
    "timing.response_rate",
    "timing.time_to_first_agent_audio_s",
    "timing.yield_latency_mean_s",
    "timing.yield_rate",
    "timing.user_barge_ins",
    "timing.agent_interruptions",
    "timing.agent_interruption_rate",
    "timing.overlap_s",
    "timing.agent_talk_share",
    "timing.user_talk_share",
    "timing.mutual_silence_s",
    "timing.longest_dead_air_s",
)


def tokens_signal(side: str, part: str) -> str:
    """``tokens.agent.prompt`` etc.; ``part`` is prompt, completion or calls."""
    return f"{TOKENS_PREFIX}{side}.{part}"


def bot_metric_signal(side: str, name: str) -> str:
    return f"{BOT_METRIC_PREFIX}{side}.{name}"
