"""The messages a reference bot builds and reads, as the contract spells them.

A bot's side of the wire in plain terms: the ``Join`` it opens a stream with,
``SessionStart`` turned into the :class:`~vae.bots.brains.session_info.SessionInfo`
its brain sees, and the final state and context it answers ``SessionEnding``
with, cut into ``FinalState`` chunks. These change with the contract's
messages (docs/contract.md); when they are sent, and what a session does with
them, is the stream's (:mod:`vae.bots.client`).
"""

from __future__ import annotations

import json
from typing import Any

from vae.bots.brains.session_info import SessionInfo
from vae.bots.sound.speech import Synthesiser
from vae.bridge.v1 import bridge_pb2
from vae.common.v1 import common_pb2

#: The rate the reference bots ask to hear audio at (and assume when not told).
RECEIVE_RATE = 16000
#: Two frames a message: half the messages, and on the virtual clock steps of
#: 32 ms (the bridge takes the smaller of the two bots' asks).
FRAMES_PER_MESSAGE = 2
#: The largest piece of a JSON document in one ``JsonChunk``.
JSON_CHUNK = 256 * 1024
_FIRST = {common_pb2.ROLE_USER: "user", common_pb2.ROLE_AGENT: "agent"}
_MODALITY = {common_pb2.MODALITY_TEXT: "text"}
_CLOCK = {common_pb2.CLOCK_KIND_VIRTUAL: "virtual"}


def join_message(
    role: str,
    synth: Synthesiser,
    *,
    name: str,
    version: str,
    run_filter: str,
    supports_text: bool,
    supports_virtual_clock: bool,
    accepts_redirect: bool,
    ticket: str = "",
) -> bridge_pb2.BotMessage:
    """The ``Join`` a stream opens with: who the bot is, its formats and what it supports."""
    pcm = common_pb2.AUDIO_ENCODING_PCM16LE
    return bridge_pb2.BotMessage(
        join=bridge_pb2.Join(
            role=common_pb2.ROLE_USER if role == "user" else common_pb2.ROLE_AGENT,
            bot=common_pb2.BotInfo(name=name, version=version, labels={"tts": synth.name}),
            send_format=common_pb2.AudioFormat(
                encoding=pcm, sample_rate_hz=synth.sample_rate, channels=1
            ),
            receive_format=common_pb2.AudioFormat(
                encoding=pcm, sample_rate_hz=RECEIVE_RATE, channels=1
            ),
            run_filter=run_filter,
            frames_per_message=FRAMES_PER_MESSAGE,
            supports_text=supports_text,
            supports_virtual_clock=supports_virtual_clock,
            accepts_redirect=accepts_redirect,
            ticket=ticket,
        )
    )


def session_info(start: bridge_pb2.SessionStart) -> SessionInfo:
    """``SessionStart`` as the plain data a brain sees."""

    def obj(text: str, default: Any) -> Any:
        return json.loads(text) if text else default

    return SessionInfo(
        session_id=start.session.session_id,
        run_id=start.session.run_id,
        scenario_name=start.session.scenario_name,
        role="user" if start.role == common_pb2.ROLE_USER else "agent",
        domain=start.domain,
        system_prompt=start.system_prompt,
        tools=obj(start.tools_json, {}),
        initial_state=obj(start.initial_state_json, {}),
        initialization_actions=obj(start.initialization_actions_json, []),
        side_config=obj(start.side_config_json, {}),
        max_duration_ms=start.max_duration_ms,
        share_transcripts=start.share_transcripts,
        receive_rate=start.receive_format.sample_rate_hz or RECEIVE_RATE,
        first_speaker=_FIRST.get(start.first_speaker, ""),
        modality=_MODALITY.get(start.modality, "audio"),
        clock=_CLOCK.get(start.clock, "real"),
        frame_ms=start.frame_ms or 16,
        seed=start.seed,
        tool_backend={
            "http_url": start.tool_backend.http_url,
            "openapi_url": start.tool_backend.openapi_url,
            "mcp_url": start.tool_backend.mcp_url,
        }
        if start.HasField("tool_backend")
        else {},
    )


def json_chunks(doc: Any) -> list[common_pb2.JsonChunk]:
    """``doc`` as JSON in ``JsonChunk`` pieces (one empty piece for nothing)."""
    data = json.dumps(doc, ensure_ascii=False, default=str).encode()
    pieces = [data[i : i + JSON_CHUNK] for i in range(0, len(data), JSON_CHUNK)] or [b""]
    return [
        common_pb2.JsonChunk(offset=i * JSON_CHUNK, data=p, last=i == len(pieces) - 1)
        for i, p in enumerate(pieces)
    ]


def final_state_messages(state: Any, context: Any) -> list[bridge_pb2.BotMessage]:
    """The FinalState messages: state chunks, then context chunks, the last done."""
    msgs = [bridge_pb2.FinalState(state=c) for c in json_chunks(state)]
    msgs += [bridge_pb2.FinalState(context=c) for c in json_chunks(context)]
    msgs[-1].done = True
    return [bridge_pb2.BotMessage(final_state=m) for m in msgs]
