"""docs/contract.md says what the code does, and each rule is in the .proto comments too.

The guide is the only thing a stranger reads beside the protos, so its
numbers are checked against the defaults they describe, and the rules a bot
must follow are checked to appear in the proto comments as well.
"""

from __future__ import annotations

from pathlib import Path

from vae.bots.sound.listening import ListenSettings
from vae.bridge_service.config import BridgeSettings, RunSettings, StopReason
from vae.bridge_service.connectors.base import ConnectorConfig

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "contract.md").read_text()
PROTOS = "\n".join(p.read_text() for p in (ROOT / "protos").rglob("*.proto"))

#: Each rule as the guide words it and as the protos word it.
RULES = [
    ("authorization: Bearer T", "`authorization: Bearer T`"),
    ("grpc.health.v1.Health", "grpc.health.v1.Health"),
    ("**exact** run id", "the exact run id, not a prefix"),
    ("**at most 25,000 bytes**", "must be at most 25,000"),
    ("**Send continuous audio**", "Send continuously from"),
    ("**silence when the peer is quiet**", "silence when the peer is quiet"),
    ("−45 dBFS", "-45 dBFS"),
    ("−38 dBFS", "-38 dBFS"),
    ("500 ms of quiet", "500 ms of quiet"),
    ("1 s by default", "1 s by default"),
    ("half-close", "half-close"),
    ("64 MiB", "64 MiB"),
    ("`first_speaker` (140)", "first_speaker = 140"),
    ("FIRST_SPEAKER_SILENT", "STOP_REASON_FIRST_SPEAKER_SILENT"),
    ("CONNECTOR_FAILED", "STOP_REASON_CONNECTOR_FAILED"),
    ("recorded (`PEER_NEVER_JOINED`)", "STOP_REASON_PEER_NEVER_JOINED"),
    (
        "`to_agent` and `to_user` hold what the bridge **delivered**",
        "`to_agent` and `to_user` are what the bridge delivered",
    ),
    ("`NOTICE_CODE_SLOW_READER`", "NOTICE_CODE_SLOW_READER"),
    ("2 s of audio per direction", "2 s per direction"),
    ("errors.md", "docs/errors.md"),
    ("`supports_text` (250)", "bool supports_text = 250"),
    ("`supports_virtual_clock` (251)", "bool supports_virtual_clock = 251"),
    ("`modality` (250)", "vae.common.v1.Modality modality = 250"),
    ("`clock` (251)", "vae.common.v1.ClockKind clock = 251"),
    ("180 words a minute", "180 words a minute"),
    ("Do not send a `Transcript` for it", "do not send a Transcript event for it"),
    (
        "only after both bots have answered step",
        "when both bots have answered the current step",
    ),
    ("`CLOCK_STALLED`", "STOP_REASON_CLOCK_STALLED"),
    ("`BOT_UNSUPPORTED`", "STOP_REASON_BOT_UNSUPPORTED"),
    ("`ClockAck.audio`", "vae.common.v1.AudioChunk audio = 3"),
    ("`accepts_redirect` (230)", "bool accepts_redirect = 230"),
    ("`ticket` (231)", "string ticket = 231"),
    ("**host you dialled the bridge with**", "to the *host you dialled*"),
    ("`WORKER_LOST`", "STOP_REASON_WORKER_LOST"),
    ("`BRIDGE_LOST`", "STOP_REASON_BRIDGE_LOST"),
]


def test_every_rule_is_in_the_guide_and_in_the_protos() -> None:
    for in_doc, in_protos in RULES:
        assert in_doc in DOC, in_doc
        assert in_protos in PROTOS, in_protos


def test_the_guide_states_the_real_defaults() -> None:
    b, r, listen = BridgeSettings(), RunSettings(), ListenSettings()
    assert b.max_chunk_bytes == 25_000
    assert b.max_buffer_ms == 2000 and b.max_outgoing_frames == 125
    assert (b.speech_threshold_dbfs, b.speech_min_s, b.speech_hangover_s) == (-45.0, 0.06, 0.5)
    assert (listen.threshold_dbfs, listen.min_speech_ms, listen.end_silence_ms) == (-38, 60, 500)
    assert (b.end_grace_s, b.final_state_timeout_s, b.wait_timeout_s) == (1.0, 10.0, 300.0)
    assert b.max_final_state_bytes == 64 * 1024 * 1024
    assert (r.frame_ms, r.jitter_buffer_ms, r.inactivity_timeout_s) == (16, 80, 120.0)
    assert (r.pairing_timeout_s, r.first_speaker_timeout_s) == (60.0, 10.0)
    assert ConnectorConfig("pipecat").connect_timeout_s == 30.0
    for text in ("300 s", "60 s", "10 s", "120 s", "80 ms", "16 ms", "125", "30 s"):
        assert text in DOC, text


def _timeout_rows() -> dict[str, str]:
    """The "Timeouts and grace periods" table: each row's *what* to its *default*."""
    section = DOC.split("## Timeouts and grace periods", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| ")]
    return {what.strip(): default.strip() for what, default, _ in rows[1:]}


def test_each_timeout_row_states_its_default_and_its_stop_reason() -> None:
    b, r = BridgeSettings(), RunSettings()
    connect_s = ConnectorConfig("pipecat").connect_timeout_s
    assert _timeout_rows() == {
        "a joined stream waits for a session": f"{b.wait_timeout_s:g} s, then `WaitTimeout`",
        "a session waits for both bots": (
            f"{r.pairing_timeout_s:g} s, then the attempt is recorded"
            f" (`{StopReason.PEER_NEVER_JOINED.name}`)"
        ),
        "the expected first speaker stays silent (and so does the line)": (
            f"{r.first_speaker_timeout_s:g} s, then `{StopReason.FIRST_SPEAKER_SILENT.name}`"
        ),
        "no speech on either side": (
            f"{r.inactivity_timeout_s:g} s, then `{StopReason.INACTIVITY_TIMEOUT.name}`"
        ),
        "on the virtual clock, a bot answers no step (wall time)": (
            f"the inactivity timeout, then `{StopReason.CLOCK_STALLED.name}`"
        ),
        "the conversation's length": "the scenario's `max_duration`",
        "last words after `EndConversation`": f"{b.end_grace_s:g} s",
        "`FinalState` after `SessionEnding`": f"{b.final_state_timeout_s:g} s",
        "a connector's refused connection is retried": (
            f"{connect_s:g} s, then `{StopReason.CONNECTOR_FAILED.name}`"
        ),
    }
