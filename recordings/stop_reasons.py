"""The one table of stop reasons: which count as a finished attempt, and what each means.

Why one table: resume classification (``vae.recordings.read.selection``), retries and
the run summary (``bridge_service``) and the scorer's composites
(``scorer_service``) must agree on whether an attempt ran to an end that says
something about the agent. The bridge and the scorer never import each other,
so the rule lives here, in the store layer both read. ``docs/scoring.md``
holds the same table for users; a test keeps the two in step.

- A **finished** attempt ended in a way that is a verdict on the conversation
  (the agent's end tool, a hang-up, a timeout, a bot that left or broke
  mid-call, the agent under test that never spoke, a recorded real call that
  ran to its end). It is scored normally.
- An **unfinished** attempt was cut off by something outside the conversation
  (a cancel, a shutdown, a peer that never joined, a connector that never
  connected, a failure of the bridge or of the store, a crashed imported
  attempt). ``vae run --resume`` runs it again (the old attempt is kept and
  marked superseded) and the scorer never gives it ``passed`` or ``failed``:
  its composites are ``unscored`` with the stop reason as the cause.

Values are the lower-case strings stored in ``sessions.stop_reason`` (the
proto enum's names without ``STOP_REASON_``), kept as plain strings so this
module needs neither protobuf nor the bridge's enum. ``recording_ended`` is
the store's own: only ``vae import calls`` writes it, never the bridge, so the
proto has no value for it (``GetRun`` reports it as unspecified).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StopReasonInfo:
    name: str
    finished: bool
    description: str
    #: What ``vae run --resume`` does with an attempt that ended this way.
    resume: str


_RERUN = "re-run (old attempt kept, superseded)"
_KEEP = "kept (re-run only if it had 0 turns or too few agent turns)"

TABLE: tuple[StopReasonInfo, ...] = (
    StopReasonInfo("end_tool", True, "the agent called its end tool", _KEEP),
    StopReasonInfo("user_hang_up", True, "the simulated user hung up", _KEEP),
    StopReasonInfo("inactivity_timeout", True, "nobody spoke for the inactivity timeout", _KEEP),
    StopReasonInfo("max_duration", True, "the maximum duration was reached", _KEEP),
    StopReasonInfo("bot_disconnected", True, "a bot's stream closed or broke mid-call", _KEEP),
    StopReasonInfo(
        "bot_error", True, "a bot sent something the bridge refused, or reported an error", _KEEP
    ),
    StopReasonInfo("first_speaker_silent", True, "the bot due to speak first never spoke", _KEEP),
    StopReasonInfo("replay_finished", True, "a replayed side ran out of recorded turns", _KEEP),
    StopReasonInfo(
        "clock_stalled",
        True,
        "on the virtual clock, a bot stopped answering steps (for the inactivity timeout,"
        " in wall time)",
        _KEEP,
    ),
    StopReasonInfo(
        "agent_crashed",
        True,
        "the agent's process (a connector started it) exited mid-call; its stderr tail is recorded",
        _KEEP,
    ),
    StopReasonInfo(
        "agent_silent",
        True,
        "the agent's process ran but never spoke within the connector's speak timeout; its"
        " stderr tail is recorded",
        _KEEP,
    ),
    StopReasonInfo(
        "recording_ended",
        True,
        "an imported recording of a real call ran to its end (how the call ended is not"
        " recorded: CLEAN_EXIT is unscored)",
        _KEEP,
    ),
    StopReasonInfo("cancelled", False, "the run was cancelled (e.g. Ctrl-C)", _RERUN),
    StopReasonInfo("shutdown", False, "the bridge shut down mid-call", _RERUN),
    StopReasonInfo(
        "peer_never_joined", False, "a bot never joined within the pairing timeout", _RERUN
    ),
    StopReasonInfo(
        "connector_failed", False, "a connector could not reach or serve its bot", _RERUN
    ),
    StopReasonInfo(
        "agent_start_failed",
        False,
        "the agent's process (a connector starts one per session) exited or timed out before"
        " it connected; its stderr tail is the detail",
        _RERUN,
    ),
    StopReasonInfo("bridge_error", False, "the bridge itself failed running the session", _RERUN),
    StopReasonInfo(
        "attempt_crashed", False, "an imported attempt crashed or was killed mid-call", _RERUN
    ),
    StopReasonInfo("storage_error", False, "the store could not record the session", _RERUN),
    StopReasonInfo(
        "bot_unsupported",
        False,
        "only bots that did not declare the run's text or virtual-clock support were waiting",
        _RERUN,
    ),
    StopReasonInfo(
        "worker_lost",
        False,
        "the bridge worker process serving the session died or was stopped mid-call",
        _RERUN,
    ),
    StopReasonInfo(
        "bridge_lost",
        False,
        "another bridge sharing the database served the session and died or stopped mid-call",
        _RERUN,
    ),
    StopReasonInfo("sip_busy", False, "the SIP agent was busy (486, 600)", _RERUN),
    StopReasonInfo("sip_not_found", False, "the SIP address does not exist (404)", _RERUN),
    StopReasonInfo(
        "sip_no_answer",
        False,
        "the SIP call was not answered (408, 480, the ring timeout, no response)",
        _RERUN,
    ),
    StopReasonInfo("sip_declined", False, "the SIP agent declined the call (603)", _RERUN),
    StopReasonInfo("sip_server_error", False, "the SIP agent failed (5xx)", _RERUN),
    StopReasonInfo(
        "sip_auth_failed",
        False,
        "SIP digest authentication failed (credentials refused, or none given)",
        _RERUN,
    ),
    StopReasonInfo(
        "sip_rtp_timeout", False, "no RTP from the SIP agent for the RTP timeout", _RERUN
    ),
)

BY_NAME: dict[str, StopReasonInfo] = {info.name: info for info in TABLE}
FINISHED: frozenset[str] = frozenset(i.name for i in TABLE if i.finished)
UNFINISHED: frozenset[str] = frozenset(i.name for i in TABLE if not i.finished)

_ALIASES = {"[exit]": "end_tool", "[timeout]": "max_duration", "exit": "end_tool"}


def normalise(value: str | None) -> str:
    """``end_tool`` from any spelling the store may hold (``STOP_REASON_END_TOOL``, ``[EXIT]``)."""
    text = (value or "").strip().lower().removeprefix("stop_reason_")
    return _ALIASES.get(text, text)


def is_finished(value: str | None) -> bool:
    """True when an attempt that stopped for ``value`` ran to a meaningful end.

    An empty reason (still running) and a reason this version does not know
    count as unfinished: never guess a verdict.
    """
    return normalise(value) in FINISHED


def describe(value: str | None) -> str:
    info = BY_NAME.get(normalise(value))
    if info is None:
        return f"unknown stop reason {value!r}" if value else "no stop reason (never ended)"
    return info.description


def unfinished_cause(value: str | None) -> str:
    """The cause recorded beside an ``unscored`` composite of an unfinished attempt."""
    return f"unfinished: {normalise(value) or 'never ended'}"
