"""``vae run``'s options as the bridge's ``StartRunRequest``.

Why a module: the request changes whenever the bridge's ``RunOptions`` or
connector contract gains a field, which is no reason to touch the click
declarations (``cli/runs/run_cmd.py``) or the client that drives the call
(``cli/runs/run_client.py``). It loads the generated contract at import time, so
it is imported only when a run starts, never for ``--help``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vae.bridge.v1 import bridge_pb2
from vae.cli.runs.sip_opts import apply_sip, kind_of
from vae.common.v1 import common_pb2

#: ``vae run`` keyword -> the ``RunOptions`` field it sets when given.
_OPTION_FIELDS = {
    "concurrency": "concurrency",
    "max_duration": "max_duration_s",
    "inactivity_timeout": "inactivity_timeout_s",
    "min_agent_turns": "min_agent_turns",
    "retry_stale": "auto_resume_on_stale",
    "max_retries": "max_auto_retries",
    "retry_insufficient": "auto_resume_on_insufficient_turns",
    "retry_backoff": "auto_retry_backoff_s",
    "pairing_timeout": "pairing_timeout_s",
    "seed": "seed",
    "repeat": "repeat",
    "share_transcripts": "share_transcripts",
    "first_speaker_timeout": "first_speaker_timeout_s",
    "tool_backend": "tool_backend",
}


def source(arg: str) -> bridge_pb2.ScenarioSource:
    path = Path(arg)
    if path.suffix == ".py" or (
        not path.exists() and all(p.isidentifier() for p in arg.split("."))
    ):
        return bridge_pb2.ScenarioSource(
            python_module=str(path.resolve()) if path.exists() else arg
        )
    # Paths are read by the bridge process: send them absolute.
    return bridge_pb2.ScenarioSource(path=str(path.resolve()))


def connector(
    urls: tuple[str, ...],
    kind: str | None,
    options: str,
    capacity: int | None,
    timeout: float | None,
) -> bridge_pb2.ConnectorConfig | None:
    """One side's connector: the first URL, the others as its pool.

    The kind comes from ``--connector-kind``, else from the URL: ``twilio+ws://``
    is a Twilio Media Streams bot, ``sip:`` a SIP agent vae calls,
    ``sip-inbound:`` one that calls vae, ``livekit:PATH`` a LiveKit agent file
    (sent absolute: the bridge starts it), ``webrtc+http://`` a pipecat
    SmallWebRTC bot, plain ``ws://`` a pipecat bot.
    """
    if not urls:
        return None
    kind = kind or kind_of(urls[0])
    if kind == "livekit":
        urls = tuple(f"livekit:{Path(u.removeprefix('livekit:')).resolve()}" for u in urls)
    cfg = bridge_pb2.ConnectorConfig(
        kind=kind, url=urls[0], options_json=options, pool_urls=list(urls[1:])
    )
    if capacity is not None:
        cfg.capacity = capacity
    if timeout is not None:
        cfg.connect_timeout_s = timeout
    return cfg


_MODALITY = {"audio": common_pb2.MODALITY_AUDIO, "text": common_pb2.MODALITY_TEXT}
_CLOCK = {
    "real": common_pb2.CLOCK_KIND_REAL,
    "virtual": common_pb2.CLOCK_KIND_VIRTUAL,
    "auto": common_pb2.CLOCK_KIND_AUTO,
}


def set_tier(options: bridge_pb2.RunOptions, modality: str | None, clock: str | None) -> None:
    """Set ``--modality`` and ``--clock`` on ``options``.

    Unset: the bridge's defaults, audio, and the modality's clock (auto in text, real
    in audio).
    """
    if modality:
        options.modality = _MODALITY[modality]
    if clock:
        options.clock = _CLOCK[clock]


def set_line(options: bridge_pb2.RunOptions, line: dict[str, Any]) -> None:
    """``--line``'s fields on ``RunOptions.line`` (the bridge checks the ranges too)."""
    for name, value in line.items():
        if name == "codec":
            options.line.codec = str(value)
        elif value is not None:
            setattr(options.line, name, float(value))


def run_options(tags: tuple[str, ...], opts: dict[str, Any]) -> bridge_pb2.RunOptions:
    """The ``RunOptions``: only what was given is set (the bridge's defaults stand otherwise)."""
    options = bridge_pb2.RunOptions(tags=list(tags))
    for name, field in _OPTION_FIELDS.items():
        if opts[name] is not None:
            setattr(options, field, opts[name])
    if opts["gate_silence"] is not None:
        options.replay_gate_silence_s = opts["gate_silence"]
    if opts["end_policy"]:
        options.end_policy = (
            bridge_pb2.END_POLICY_TOOL_ONLY
            if opts["end_policy"] == "tool-only"
            else bridge_pb2.END_POLICY_VALID_TERMINAL_STATE
        )
    if opts["first_speaker"]:
        options.first_speaker = (
            common_pb2.ROLE_USER if opts["first_speaker"] == "user" else common_pb2.ROLE_AGENT
        )
    set_tier(options, opts.get("modality"), opts.get("clock"))
    if opts.get("line"):
        set_line(options, opts["line"])
    if opts.get("redaction_json"):
        options.redaction_json = opts["redaction_json"]
    for name in ("otlp_receiver", "otel_endpoint"):  # the bridge receives / exports
        if opts.get(name):
            setattr(options, name, opts[name])
    for side in ("user", "agent"):
        cfg = connector(
            opts[f"{side}_connector"],
            opts["connector_kind"],
            opts["connector_options"],
            opts["connector_capacity"],
            opts["connect_timeout"],
        )
        if cfg is not None:
            apply_sip(cfg, opts)
            getattr(options, f"{side}_connector").CopyFrom(cfg)
    return options


def start_run_request(
    scenarios: tuple[str, ...],
    tags: tuple[str, ...],
    opts: dict[str, Any],
    *,
    run_id: str,
    resume: str,
    check: bool,
    replay: dict[str, Any],
) -> bridge_pb2.StartRunRequest:
    """The request ``vae run`` sends; ``replay`` holds the fields of ``replay_fields``."""
    options = run_options(tags, opts)
    return bridge_pb2.StartRunRequest(
        sources=[source(s) for s in scenarios],
        options=options,
        run_id=run_id,
        resume=resume,
        dry_run=check,
        **replay,
    )
