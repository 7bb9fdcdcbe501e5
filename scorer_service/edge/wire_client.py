"""Rescoring through a running scorer service (``vae rescore --scorer ADDR``).

The client-side mirror of the servicer: it streams the Rescore RPC and hands
back the same domain records as the in-process :func:`vae.scorer_service.scoring.rescore.rescore`,
so the CLI prints both paths the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from vae.recordings.models import ScoringRecord
from vae.scorer.v1 import scorer_pb2, scorer_pb2_grpc
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.edge import convert
from vae.scorer_service.ledger.aggregate import SessionOutcome
from vae.serving import client_channel


async def remote_rescore(
    address: str,
    run_ref: str,
    config: ScoringConfig,
    *,
    mode: str = "append",
    session_ids: Sequence[str] = (),
    token: str | None = None,
    tls_ca: Path | None = None,
    on_progress: Callable[[int, int, SessionOutcome], None] | None = None,
    make_current: bool = False,
) -> tuple[ScoringRecord, list[SessionOutcome]]:
    """Rescore on the service at ``address``; raises ``grpc.aio.AioRpcError`` on failure."""
    pb_config = convert.config_to_proto(config.to_dict())
    pb_config.judge.api_key = config.judge.api_key
    pb_config.transcription.api_key = config.transcription.api_key
    request = scorer_pb2.RescoreRequest(
        run=run_ref,
        config=pb_config,
        mode=scorer_pb2.WRITE_MODE_OVERWRITE
        if mode == "overwrite"
        else scorer_pb2.WRITE_MODE_APPEND,
        session_ids=list(session_ids),
        make_current=make_current,
    )
    outcomes: list[SessionOutcome] = []
    scoring: ScoringRecord | None = None
    # The token goes on the call itself: grpc.aio files a channel interceptor
    # under its first matching kind only, so vae.serving's combined token
    # interceptor never reaches unary-stream calls such as Rescore.
    metadata = (("authorization", f"Bearer {token}"),) if token else None
    async with client_channel(address, tls_ca=tls_ca) as channel:
        stub = scorer_pb2_grpc.ScorerServiceStub(channel)
        async for message in stub.Rescore(request, metadata=metadata):
            if message.HasField("session"):
                outcome = convert.session_from_proto("", message.session)
                outcomes.append(outcome)
                if on_progress is not None:
                    on_progress(message.sessions_done, message.sessions_total, outcome)
            elif message.HasField("scoring"):
                scoring = convert.scoring_from_proto(message.scoring)
    if scoring is None:
        raise RuntimeError("the scorer closed the stream without the scoring")
    for o in outcomes:
        o.scores = [
            type(s)(
                scoring.scoring_id, s.session_id, s.signal, s.verdict, s.value, s.detail, s.error
            )
            for s in o.scores
        ]
    outcomes.sort(key=lambda o: o.scenario_name)
    return scoring, outcomes
