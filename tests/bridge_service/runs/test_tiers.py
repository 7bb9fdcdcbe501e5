"""``RunOptions.clock`` auto: each session's clock from what its two bots declared.

Text runs on auto unless told: a session whose two bots both declared
``Join.supports_virtual_clock`` runs on the virtual clock, one where a bot did
not runs on the real clock — never on a clock a bot cannot follow — and the
clock each session took is what it was told (``SessionStart.clock``), what the
run's watchers see (``SessionSummary.clock``) and what the store records.
Audio stays on the real clock unless told.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from tests.bridge_service.bots import TestBot, fmt
from tests.bridge_service.conftest import scenario, start_run, watch
from tests.bridge_service.lockstep_bots import StepBot
from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.bridge_service.config import RunSettings
from vae.bridge_service.connectors.base import Capabilities
from vae.bridge_service.runs.tiers import session_clock
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import Side
from vae.recordings.read.reader import RecordingReader

USER, AGENT = common_pb2.ROLE_USER, common_pb2.ROLE_AGENT
TEXT = common_pb2.MODALITY_TEXT
REAL, VIRTUAL = common_pb2.CLOCK_KIND_REAL, common_pb2.CLOCK_KIND_VIRTUAL


async def text_run(
    bridge: BridgeServer,
    stub: bridge_pb2_grpc.BridgeServiceStub,
    *,
    agent_virtual: bool,
    **options: object,
) -> tuple[StepBot, StepBot, list[bridge_pb2.WatchRunResponse], str]:
    """One text scenario with no clock asked for: the agent greets, the user answers."""
    run_id = await start_run(
        stub, [scenario()], modality=TEXT, inactivity_timeout_s=1, max_auto_retries=0, **options
    )
    agent = StepBot(
        bridge.address,
        AGENT,
        run_id,
        turns={0: "Trattoria Luca, good evening."},
        supports_virtual_clock=agent_virtual,
        end_at=None if not agent_virtual else 3,
    )
    user = StepBot(bridge.address, USER, run_id, reply="a table for two", turns={1: "Hi."})
    _, _, events = await asyncio.gather(agent.run(), user.run(), watch(stub, run_id, 20))
    return user, agent, events, run_id


def ended(events: list[bridge_pb2.WatchRunResponse]) -> bridge_pb2.SessionSummary:
    (summary,) = [e.session for e in events if e.kind == bridge_pb2.RUN_EVENT_KIND_SESSION_ENDED]
    return summary


async def test_text_runs_virtual_where_both_bots_declare_it_and_records_it(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    user, agent, events, run_id = await text_run(bridge, stub, agent_virtual=True)
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    assert user.start.clock == VIRTUAL and agent.start.clock == VIRTUAL
    assert user.ticks and agent.ticks, "the virtual clock ticks a text session"
    assert ended(events).clock == VIRTUAL
    with RecordingReader(bridge.db_path) as reader:
        run = reader.get_run(run_id)
        assert run is not None and run.options["clock"] == "auto", "the run asked for auto"
        (s,) = reader.sessions(run_id)
        mode = reader.session_mode(s.session_id)
        assert (mode.modality, mode.clock) == ("text", "virtual")
        assert reader.session_clock(s.session_id)["clock"] == "virtual"
        assert s.stop_reason == "end_tool"


async def test_text_runs_real_when_one_bot_does_not_declare_the_virtual_clock(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    user, agent, events, run_id = await text_run(bridge, stub, agent_virtual=False)
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    assert user.start.clock == REAL and agent.start.clock == REAL
    assert user.ticks == [] and agent.ticks == [], "no ticks on the real clock"
    assert [t.text for t in user.texts] == ["Trattoria Luca, good evening."]
    assert [t.text for t in agent.texts] == ["a table for two"]
    assert ended(events).clock == REAL
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        mode = reader.session_mode(s.session_id)
        assert (mode.modality, mode.clock) == ("text", "real")
        # Nobody spoke for the inactivity timeout of wall time: the call ended as in audio.
        assert s.stop_reason == "inactivity_timeout"


async def test_one_run_records_each_sessions_own_clock(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id = await start_run(
        stub,
        [scenario("first"), scenario("second")],
        modality=TEXT,
        concurrency=1,
        inactivity_timeout_s=1,
        max_auto_retries=0,
    )
    # The first pair can follow the virtual clock; the second pair's agent cannot.
    for name, virtual in (("able", True), ("wall-only", False)):
        agent = StepBot(bridge.address, AGENT, run_id, name=name, supports_virtual_clock=virtual,
                        turns={0: "Hello."}, end_at=3 if virtual else None)  # fmt: skip
        user = StepBot(bridge.address, USER, run_id, name="caller", reply="Hi.")
        await asyncio.gather(agent.run(), user.run())
        assert user.start.clock == (VIRTUAL if virtual else REAL), name
    events = await watch(stub, run_id, 20)
    assert events[-1].kind == bridge_pb2.RUN_EVENT_KIND_RUN_FINISHED
    with RecordingReader(bridge.db_path) as reader:
        clocks = {
            s.agent_bot["name"]: reader.session_mode(s.session_id).clock
            for s in reader.sessions(run_id)
        }
    assert clocks == {"able": "virtual", "wall-only": "real"}


async def test_audio_stays_on_the_real_clock_with_bots_that_could_follow_the_virtual_one(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id = await start_run(stub, [scenario()], max_auto_retries=0)

    async def hang_up(bot: TestBot) -> None:
        await bot.end(common_pb2.END_KIND_USER_HANG_UP, "bye")

    bots = [
        TestBot(
            bridge.address,
            role,
            hang_up if role == USER else None,
            join=bridge_pb2.BotMessage(
                join=bridge_pb2.Join(
                    role=role,  # type: ignore[arg-type]
                    bot=common_pb2.BotInfo(name="able", version="1"),
                    send_format=fmt(16000),
                    receive_format=fmt(16000),
                    run_filter=run_id,
                    supports_text=True,
                    supports_virtual_clock=True,
                )
            ),
        )
        for role in (USER, AGENT)
    ]
    got_user, got_agent, events = await asyncio.gather(
        *(b.run() for b in bots), watch(stub, run_id)
    )
    assert got_user.start.clock == REAL and got_agent.start.clock == REAL
    assert got_user.start.modality == common_pb2.MODALITY_AUDIO
    assert ended(events).clock == REAL
    with RecordingReader(bridge.db_path) as reader:
        run = reader.get_run(run_id)
        assert run is not None and run.options["clock"] == "real"
        (s,) = reader.sessions(run_id)
        assert reader.session_mode(s.session_id).clock == "real"
        assert s.stop_reason == "user_hang_up"


async def test_auto_in_audio_takes_the_virtual_clock_when_both_bots_declare_it(
    bridge: BridgeServer, stub: bridge_pb2_grpc.BridgeServiceStub
) -> None:
    run_id = await start_run(
        stub, [scenario()], clock=common_pb2.CLOCK_KIND_AUTO, max_auto_retries=0
    )
    agent = StepBot(bridge.address, AGENT, run_id, speak_steps=range(5, 40), end_at=80)
    user = StepBot(bridge.address, USER, run_id)
    _, _, events = await asyncio.gather(agent.run(), user.run(), watch(stub, run_id, 20))
    assert events[-1].status == bridge_pb2.RUN_STATUS_COMPLETED
    assert user.start.clock == VIRTUAL and ended(events).clock == VIRTUAL
    with RecordingReader(bridge.db_path) as reader:
        (s,) = reader.sessions(run_id)
        assert reader.session_mode(s.session_id).clock == "virtual"
        assert s.stop_reason == "end_tool"


@dataclass
class Side_:
    capabilities: Capabilities


def test_session_clock_and_the_modality_defaults() -> None:
    both = {Side.USER: Side_(Capabilities(virtual_clock=True)),
            Side.AGENT: Side_(Capabilities(text=True, virtual_clock=True))}  # fmt: skip
    # A connector that declares text only (pipecat's kind) keeps its session real.
    one = {**both, Side.AGENT: Side_(Capabilities(text=True))}
    assert session_clock("auto", both) == "virtual"  # type: ignore[arg-type]
    assert session_clock("auto", one) == "real"  # type: ignore[arg-type]
    assert session_clock("real", both) == "real"  # type: ignore[arg-type]
    assert session_clock("virtual", one) == "virtual", "a chosen clock stands"  # type: ignore[arg-type]
    assert RunSettings().clock == "real"
    assert RunSettings(modality="text").clock == "auto"
    assert RunSettings(modality="text", clock="real").clock == "real"
    assert RunSettings.from_dict(RunSettings(modality="text").to_dict()).clock == "auto"
