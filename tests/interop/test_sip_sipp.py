"""Calling SIP agents played by SIPp: refusals, no answer, digest, hang-ups, re-INVITE.

Each test starts SIPp (Debian's sip-tester) on a free loopback port as the far
end of one call, runs a one-scenario run whose agent is ``sip:agent@...``,
and checks the attempt's stop reason and detail, SIPp's own verdict on the
exchange (its exit code: every message it expected came), and that every
address in the messages is loopback.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import require_tool
from tests.interop import sipp_scenarios as sc
from tests.interop.sip_helpers import assert_loopback_only, caller_scenario, run_through, sipp
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.server import BridgeServer
from vae.cli.main import vae as cli
from vae.recordings.models import Channel, EventKind
from vae.recordings.read.reader import RecordingReader


@pytest.fixture(autouse=True)
def _sipp() -> None:
    require_tool("sipp", "bash scripts/ci_setup_sip.sh")


def connector(uri: str, *, secrets: dict[str, str] | None = None, **options: object
              ) -> bridge_pb2.ConnectorConfig:  # fmt: skip
    cfg = bridge_pb2.ConnectorConfig(kind="sip", url=uri, options_json=json.dumps(options))
    cfg.secrets.update(secrets or {})
    return cfg


@pytest.mark.parametrize(
    ("status", "reason", "code"),
    [
        ("486 Busy Here", "sip_busy", 486),
        ("404 Not Found", "sip_not_found", 404),
        ("603 Decline", "sip_declined", 603),
        ("503 Service Unavailable", "sip_server_error", 503),
        ("480 Temporarily Unavailable", "sip_no_answer", 480),
    ],
)
async def test_a_refused_call_ends_with_its_reason_and_code(
    tmp_path: Path,
    bridge: BridgeServer,
    bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
    status: str,
    reason: str,
    code: int,
) -> None:
    async with sipp(tmp_path, sc.reject(status)) as far:
        run_id, events = await run_through(bridge, bridge_stub, [caller_scenario("refused")],
                                           connector(far.uri))  # fmt: skip
        assert await far.finished() == 0, far.messages()  # it got its ACK
    with RecordingReader(db_path) as r:
        (s,) = r.sessions(run_id)
    assert s.stop_reason == reason
    assert f"SIP {code} " in s.stop_detail and far.uri in s.stop_detail
    assert events[-1].status == bridge_pb2.RUN_STATUS_FAILED  # unfinished: the run did not finish
    assert_loopback_only(far.messages())
    if code == 486:  # the code is in `vae runs show --json`
        shown = CliRunner().invoke(cli, ["runs", "show", run_id, "--db", str(db_path), "--json"])
        assert shown.exit_code == 0, shown.output
        (row,) = json.loads(shown.output)["sessions"]
        assert (row["stop_reason"], row["sip_code"]) == ("sip_busy", 486)


async def test_no_answer_is_cancelled_after_the_ring_timeout(
    tmp_path: Path, bridge: BridgeServer, bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
) -> None:  # fmt: skip
    async with sipp(tmp_path, sc.no_answer()) as far:
        run_id, _ = await run_through(bridge, bridge_stub, [caller_scenario("rings")],
                                      connector(far.uri, ring_timeout_s=1.5))  # fmt: skip
        assert await far.finished() == 0, far.messages()  # CANCEL came, 487 was ACKed
    with RecordingReader(db_path) as r:
        (s,) = r.sessions(run_id)
    assert s.stop_reason == "sip_no_answer" and "ring timeout of 1.5 s" in s.stop_detail
    assert "CANCEL sip:agent@" in far.messages()


async def test_digest_challenge_answered_then_a_call(
    tmp_path: Path, bridge: BridgeServer, bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    caplog.set_level("DEBUG")
    password = "pw-9f3b7e1c-never-stored"
    async with sipp(tmp_path, sc.challenge("alice", password), "-rtp_echo") as far:
        creds = {"sip_username": "alice", "sip_password": password}
        run_id, _ = await run_through(bridge, bridge_stub, [caller_scenario("auth", 4)],
                                           connector(far.uri, secrets=creds))  # fmt: skip
        assert await far.finished() == 0, far.messages()  # 200 after the credentials, then BYE
    with RecordingReader(db_path) as r:
        (s,) = r.sessions(run_id)
        heard = r.read_channel(s.session_id, Channel.AGENT)
    assert s.stop_reason == "max_duration", s.stop_detail
    assert s.agent_bot["labels"]["codec"] == "PCMU"
    assert (abs(heard.samples.astype(float)).max()) > 1000  # SIPp echoed the caller back
    assert "Authorization: Digest" in far.messages() and password not in far.messages()
    # The password is nowhere vae writes: the database (and its WAL), the logs, the run's options.
    stored = b"".join(p.read_bytes() for p in db_path.parent.glob(db_path.name + "*"))
    assert password.encode() not in stored and b"alice" not in stored
    assert password not in caplog.text
    run = await bridge_stub.GetRun(bridge_pb2.GetRunRequest(run_id=run_id))
    assert password not in str(run) and not run.run.options.agent_connector.secrets
    assert_loopback_only(far.messages())


async def test_wrong_credentials_are_auth_failed(
    tmp_path: Path, bridge: BridgeServer, bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
) -> None:  # fmt: skip
    async with sipp(tmp_path, sc.challenge("alice", "right")) as far:
        creds = {"sip_username": "alice", "sip_password": "wrong"}
        run_id, _ = await run_through(bridge, bridge_stub, [caller_scenario("bad_auth")],
                                      connector(far.uri, secrets=creds))  # fmt: skip
        assert await far.finished() == 0, far.messages()
    with RecordingReader(db_path) as r:
        (s,) = r.sessions(run_id)
    assert s.stop_reason == "sip_auth_failed" and "SIP 403 " in s.stop_detail


async def test_a_bye_from_the_agent_is_its_hang_up(
    tmp_path: Path, bridge: BridgeServer, bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
) -> None:  # fmt: skip
    async with sipp(tmp_path, sc.answer("bye", hold_ms=2500), "-rtp_echo") as far:
        run_id, _ = await run_through(bridge, bridge_stub, [caller_scenario("hangs_up", 20)],
                                      connector(far.uri))  # fmt: skip
        assert await far.finished() == 0, far.messages()
    with RecordingReader(db_path) as r:
        (s,) = r.sessions(run_id)
        logs = [e.payload for e in r.events(s.session_id) if e.kind is EventKind.LOG]
    assert (s.stop_reason, s.clean_exit) == ("end_tool", True)
    assert "the agent hung up (BYE)" in s.stop_detail
    assert any(p.get("sip_event") == "bye" for p in logs)
    assert_loopback_only(far.messages())


async def test_a_reinvite_moves_the_media_and_the_call_goes_on(
    tmp_path: Path, bridge: BridgeServer, bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
) -> None:  # fmt: skip
    async with sipp(tmp_path, sc.answer("reinvite", hold_ms=1500), "-rtp_echo") as far:
        run_id, _ = await run_through(bridge, bridge_stub, [caller_scenario("reinvited", 5)],
                                      connector(far.uri))  # fmt: skip
        assert await far.finished() == 0, far.messages()  # 200 to the re-INVITE, then our BYE
    with RecordingReader(db_path) as r:
        (s,) = r.sessions(run_id)
        logs = [e.payload for e in r.events(s.session_id) if e.kind is EventKind.LOG]
    assert s.stop_reason == "max_duration", s.stop_detail
    moved = [p["message"] for p in logs if p.get("sip_event") == "reinvite"]
    assert moved and re.search(r"media now PCMA to 127\.0\.0\.1:\d+", moved[0])
    assert_loopback_only(far.messages())


async def test_no_rtp_for_the_rtp_timeout_ends_the_call(
    tmp_path: Path, bridge: BridgeServer, bridge_stub: bridge_pb2_grpc.BridgeServiceStub,
    db_path: Path,
) -> None:  # fmt: skip
    async with sipp(tmp_path, sc.answer()) as far:  # answers, then sends no RTP at all
        run_id, _ = await run_through(bridge, bridge_stub, [caller_scenario("silent", 20)],
                                      connector(far.uri, rtp_timeout_s=1.5))  # fmt: skip
        assert await far.finished() == 0, far.messages()  # and it got our BYE
    with RecordingReader(db_path) as r:
        (s,) = r.sessions(run_id)
    assert s.stop_reason == "sip_rtp_timeout" and "no RTP from the agent" in s.stop_detail
    assert s.duration_s < 5
