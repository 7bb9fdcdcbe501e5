"""StartRun's replay fields (protobuf) -> a :class:`~.request.ReplayRequest`."""

from __future__ import annotations

from vae.bridge.v1 import bridge_pb2
from vae.bridge_service.replay.request import ReplayRequest


def replay_request(request: bridge_pb2.StartRunRequest) -> ReplayRequest | None:
    if not request.replay:
        if request.replay_scenarios or request.replay_sessions:
            raise ValueError("replay_scenarios/replay_sessions: only meaningful with replay")
        return None
    if request.resume:
        raise ValueError("replay: a replay starts a new run; give replay or resume, not both")
    return ReplayRequest(
        request.replay, tuple(request.replay_scenarios), tuple(request.replay_sessions)
    )
