"""Starting the scorer service: the servicer plus health, reflection, TLS and token."""

from __future__ import annotations

import grpc

from vae.recordings.backends.locator import StoreRef
from vae.scorer.v1 import scorer_pb2, scorer_pb2_grpc
from vae.scorer_service.edge.servicer import ScorerServicer
from vae.scorer_service.scoring.runner import SessionRunner
from vae.serving import RunningServer, TlsFiles, start_server

SERVICE_NAME = scorer_pb2.DESCRIPTOR.services_by_name["ScorerService"].full_name


#: Largest request the scorer accepts (its requests are small; replies may be large).
MAX_REQUEST = 4 * 1024 * 1024


async def start_scorer(
    db_path: StoreRef,
    address: str = "127.0.0.1:0",
    *,
    tls: TlsFiles | None = None,
    token: str | None = None,
    runner: SessionRunner | None = None,
) -> RunningServer:
    """Serve ScorerService for the store at ``db_path``; port 0 picks a free port.

    ``runner``: where Rescore scores sessions (default: in this process).
    """
    servicer = ScorerServicer(db_path, runner)

    def register(server: grpc.aio.Server) -> None:
        scorer_pb2_grpc.add_ScorerServiceServicer_to_server(servicer, server)

    return await start_server(
        address, register, [SERVICE_NAME], tls=tls, token=token, max_receive_bytes=MAX_REQUEST
    )
