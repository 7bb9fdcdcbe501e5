"""TLS and a token with workers: the redirected bots reach the worker as they reached the bridge.

The bots dial the bridge by name (``localhost``, the certificate's name) and
follow the Redirect to the same name at the worker's port, with the same CA
and token: the worker serves TLS with the bridge's certificate and refuses a
stream without the token, like the front door.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import grpc

from tests.bridge_service.bots import TestBot
from tests.bridge_service.conftest import inline
from tests.bridge_service.workers.conftest import SETTINGS, USER, alive, join, worker_pids
from tests.bridge_service.workers.test_lifecycle import story
from tests.tls import self_signed
from vae.bots.brains.scripted import play_script
from vae.bots.runner import BotConfig, run_bots
from vae.bots.sound.speech import BuzzSynthesiser
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.recordings.read.reader import RecordingReader
from vae.serving import TlsFiles, client_channel


async def test_redirected_bots_keep_tls_and_token(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    server = BridgeServer(
        tmp_path / "vae.db", SETTINGS, tls=TlsFiles(cert, key), token="s3cret", workers=2
    )
    await server.start()
    pids = worker_pids(server)
    try:
        address = f"localhost:{server.port}"
        run_id = f"t-{uuid.uuid4().hex[:8]}"
        stop = asyncio.Event()
        bots = [
            BotConfig(address, role, lambda: play_script, synth=BuzzSynthesiser(),
                      run_filter=run_id, token="s3cret", tls_ca=cert, max_sessions=1)
            for role in ("user", "agent")
        ]  # fmt: skip
        async with client_channel(address, token="s3cret", tls_ca=cert) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            async with asyncio.timeout(60):
                _, _, events = await asyncio.gather(
                    *(run_bots(b, stop) for b in bots),
                    _start_and_watch(stub, run_id),
                )
        assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED, events[-1].message
        with RecordingReader(server.db_path) as reader:
            (session,) = reader.sessions(run_id)
            served = reader.session_bridges(run_id)[session.session_id]
        assert session.stop_reason == "end_tool" and served["pid"] in pids

        # A worker's port wants the token too (and TLS: the same certificate).
        assert server.workers is not None
        worker = f"localhost:{server.workers.workers[0].port}"
        async with grpc.aio.secure_channel(
            worker, grpc.ssl_channel_credentials(cert.read_bytes())
        ) as plain:
            call = bridge_pb2_grpc.BridgeServiceStub(plain).Converse(iter([join(USER)]))
            try:
                await call.read()
                code = grpc.StatusCode.OK
            except grpc.aio.AioRpcError as exc:
                code = exc.code()
        assert code == grpc.StatusCode.UNAUTHENTICATED
        got = await TestBot(worker, USER).run()  # plaintext against TLS: no handshake
        assert got.status == grpc.StatusCode.UNAVAILABLE
    finally:
        await server.stop()
    assert not [pid for pid in pids if alive(pid)]


async def _start_and_watch(
    stub: bridge_pb2_grpc.BridgeServiceStub, run_id: str
) -> list[bridge_pb2.WatchRunResponse]:
    await stub.StartRun(bridge_pb2.StartRunRequest(run_id=run_id, sources=inline(story("secure"))))
    watch = stub.WatchRun(bridge_pb2.WatchRunRequest(run_id=run_id))
    return [event async for event in watch]
