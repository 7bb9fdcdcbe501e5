"""Calling the agent: ``--agent-connector sip:USER@HOST[:PORT][;transport=udp|tcp]``.

Each dial places one call from a user agent of its own, bound to the
address this machine uses to reach the target (``local_host`` to choose), so
Via, Contact and SDP carry that address only (loopback for a loopback
agent). The INVITE names the session (``X-Vae-Run``, ``X-Vae-Session``,
``X-Vae-Scenario``, plus the ``headers`` option); digest credentials come
from the run's secrets. A refusal becomes the attempt's stop reason
(:mod:`.refusals`); a far end that cannot be reached at all is retried by the
pool like any connector. A cancelled run cancels a ringing call (CANCEL) and
the session's end hangs up an answered one (BYE).
"""

from __future__ import annotations

from vae.bridge_service.connectors.base import (
    ConnectorConfig,
    ConnectorError,
    ConnectorOptionsError,
)
from vae.bridge_service.connectors.sip.endpoint import ControlCodec, SipEndpoint
from vae.bridge_service.connectors.sip.options import (
    SipOptions,
    credentials,
    header_value,
    parse_options,
)
from vae.bridge_service.connectors.sip.refusals import refused
from vae.bridge_service.connectors.sip.target import (
    Target,
    local_address_towards,
    parse_target,
    resolve,
)
from vae.bridge_service.connectors.tool_backend import sip_headers
from vae.recordings.models import Side
from vae.sip import SipUnavailable, require


def check_config(config: ConnectorConfig) -> tuple[SipOptions, list[tuple[str, str]]]:
    try:
        require()
    except SipUnavailable as exc:
        raise ConnectorOptionsError(str(exc)) from exc
    parsed = parse_options(config.options)
    for url in config.urls:
        parse_target(url)
    return parsed


def session_headers(config: ConnectorConfig, extra: list[tuple[str, str]]) -> list[tuple[str, str]]:
    s = config.session
    named = [] if s is None else [
        ("X-Vae-Run", header_value(s.run_id)),
        ("X-Vae-Session", header_value(s.session_id)),
        ("X-Vae-Scenario", header_value(s.scenario_name)),
    ]  # fmt: skip
    if s is not None and s.traceparent:  # W3C trace context (connectors/trace_context.py)
        named.append(("traceparent", header_value(s.traceparent)))
    if s is not None:  # the session's tool backend, if any (connectors/tool_backend.py)
        named += [(k, header_value(v)) for k, v in sip_headers(s.tool_backend)]
    return named + extra


async def dial(config: ConnectorConfig, role: Side, codec: ControlCodec) -> SipEndpoint:
    from vae.sip.agent import UserAgent
    from vae.sip.info import BOT_PACKAGE
    from vae.sip.outgoing import CallFailed, place_call

    options, extra = check_config(config)
    target: Target = resolve(parse_target(config.url))
    host = options.local_host or local_address_towards(target.peer.host, target.peer.port)
    agent = await UserAgent(host).start()
    try:
        call = await place_call(
            agent, target.uri, target.peer,
            headers=session_headers(config, extra), credentials=credentials(config),
            ring_timeout_s=options.ring_timeout_s, accept_info=(BOT_PACKAGE,),
            jitter_ms=options.jitter_ms,
        )  # fmt: skip
    except CallFailed as exc:
        await agent.close()
        if exc.code == 0:  # nothing answered at the transport level: the pool retries
            raise ConnectorError(f"sip connector: {exc}") from exc
        raise refused(exc, config.url) from exc
    except BaseException:
        await agent.close()
        raise
    call.media.max_packets_per_s = options.max_rtp_packets_per_s
    return SipEndpoint(call, role, options, codec, config.url, owned_agent=agent)
