"""The scripted agent reports what it heard: the caller's words as delivered, or its script's.

Run through a real bridge with the reference bots. With shared transcripts the
agent reports each caller turn as HEARD; an agent step's ``heard:`` replaces
what it reports for the caller's preceding turn and is what goes into its
context (what it acts on). Without shared transcripts it reports nothing and
says why, so HEARD_CORRECTLY is unscored, never wrong.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.bots.conftest import run_with_bots
from vae.bots.brains.scripted import ScriptError, parse_script
from vae.bridge_service.server import BridgeServer
from vae.recordings.models import EventKind, Side, Verdict
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore

FIRST = "I need a table for two on Friday."
SECOND = "At eight, please."
MISHEARD = "At nine, please."


def scenario(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "max_duration": 40,
        "user": {"script": [FIRST, SECOND, {"say": "Bye.", "no_wait": False}]},
        "agent": {
            "script": [
                "Luigi's, hello.",
                "What time?",
                {"heard": MISHEARD, "say": "Booked for nine."},
                {"say": "Goodbye.", "end": True},
            ]
        },
        "success_signals": ["CLEAN_EXIT"],
    }


def heard_and_context(db: Any, run_id: str) -> tuple[list[str], list[str], list[str], str]:
    with RecordingReader(db) as reader:
        (session,) = reader.latest_attempts(run_id).values()
        events = reader.events(session.session_id)
        context = reader.final_states(session.session_id)[Side.AGENT].context
    heard = [
        str(e.payload["text"])
        for e in events
        if e.kind is EventKind.TRANSCRIPT
        and e.side is Side.AGENT
        and "heard" in str(e.payload["kind"])
    ]
    users = [str(m["content"]) for m in context if isinstance(m, dict) and m.get("role") == "user"]
    logs = [str(e.payload.get("message")) for e in events if e.kind is EventKind.LOG]
    return heard, users, logs, session.session_id


async def test_the_scripted_agent_reports_what_it_heard(bridge: BridgeServer) -> None:
    shared_id, private_id = await asyncio.gather(
        run_with_bots(bridge, [scenario("heard_shared")], share_transcripts=True),
        run_with_bots(bridge, [scenario("heard_private")], share_transcripts=False),
    )
    heard, context, _, _ = heard_and_context(bridge.db_path, shared_id)
    # As delivered, except the turn the script says it misheard; the rest after it too.
    assert heard == [FIRST, MISHEARD, "Bye."]
    assert context == heard, "what it reports hearing is what it acts on"
    none, private_context, logs, _ = heard_and_context(bridge.db_path, private_id)
    assert none == [] and private_context == []
    assert any("transcripts are not shared" in m for m in logs)

    shared = await rescore(bridge.db_path, shared_id, ScoringConfig())
    scores = {s.signal: s for s in shared.sessions[0].scores}
    verdict = scores["HEARD_CORRECTLY"]
    assert verdict.verdict is Verdict.FAILED
    (m,) = verdict.detail["mismatches"]
    assert (m["said"], m["heard"]) == ("eight", "nine")
    private = await rescore(bridge.db_path, private_id, ScoringConfig())
    silent = next(s for s in private.sessions[0].scores if s.signal == "HEARD_CORRECTLY")
    assert silent.verdict is Verdict.UNSCORED and silent.error.startswith("no_heard_transcript")


def test_heard_is_an_agent_step_and_a_string() -> None:
    script = parse_script({"script": [{"heard": " At nine. ", "say": "Ok."}]}, "agent")
    assert script.items[0].heard == "At nine."
    with pytest.raises(ScriptError, match=r"script\[0\]\.heard: only an agent step"):
        parse_script({"script": [{"heard": "x", "say": "Ok."}]}, "user")
    with pytest.raises(ScriptError, match=r"script\[0\]\.heard: must be a string"):
        parse_script({"script": [{"heard": 3}]}, "agent")
