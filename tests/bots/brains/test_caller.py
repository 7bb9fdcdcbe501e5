"""Realistic callers against a real bridge: languages, behaviours, the openai voice, voicemail.

Real bridge on loopback, real SQLite under tmp_path, real PCM; the voices are
eSpeak NG where the scenario names one (the languages), the deterministic
buzz otherwise (so timings do not depend on what is installed); the openai
engine talks to a loopback ``/v1/audio/speech`` server through the real
client. Every assertion is on what the recording holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from tests.bots.conftest import run_with_bots
from tests.tts_server import SpeechServer
from vae.bridge_service.server import BridgeServer
from vae.common.v1 import common_pb2
from vae.recordings.models import Channel, EventKind, Side
from vae.recordings.read.reader import RecordingReader
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore

SUITE = Path(__file__).resolve().parents[3] / "examples" / "suite"
LONG = "Let me explain our policy in detail: each bag may weigh up to twenty three kilos in all."


AGENT: list[Any] = [
    "Hello, how can I help?",
    "Sure, go on.",
    {"say": "Done. Goodbye.", "end": True},
]


def two_sided(name: str, user: dict[str, Any], agent: list[Any] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "max_duration": 60,
        "user": {"script": ["Hi, I have a question.", "It is about my bag."], **user},
        "agent": {"script": agent or AGENT},
        "success_signals": ["CLEAN_EXIT"],
    }


def session_of(db: Path, run_id: str, name: str) -> str:
    with RecordingReader(db) as reader:
        return next(s.session_id for s in reader.sessions(run_id) if s.scenario_name == name)


def logs(db: Path, sid: str, side: Side) -> list[str]:
    with RecordingReader(db) as reader:
        return [str(e.payload.get("message", "")) for e in reader.events(sid, [EventKind.LOG])
                if e.side is side]  # fmt: skip


def spoken(db: Path, sid: str, side: Side) -> list[dict[str, Any]]:
    with RecordingReader(db) as reader:
        return [e.payload for e in reader.events(sid, [EventKind.TRANSCRIPT])
                if e.side is side and e.payload.get("kind") == "spoken"]  # fmt: skip


def voiced_spans(db: Path, sid: str, channel: Channel) -> list[tuple[float, float]]:
    """Voiced stretches of a delivered channel, in seconds on the bridge clock (abs. time)."""
    with RecordingReader(db) as reader:
        audio = reader.read_channel(sid, channel)
    frame = audio.sample_rate // 50
    x = audio.samples[: len(audio.samples) // frame * frame].astype(np.float64).reshape(-1, frame)
    loud = np.sqrt((x**2).mean(axis=1)) > 300
    spans: list[tuple[float, float]] = []
    t0 = audio.t0_ns / 1e9
    for i in np.flatnonzero(loud):
        t = t0 + i * 0.02
        if spans and t - spans[-1][1] <= 0.3:
            spans[-1] = (spans[-1][0], t + 0.02)
        else:
            spans.append((t, t + 0.02))
    return spans


async def test_the_caller_speaks_spanish_and_german_and_the_session_names_the_voice(
    bridge: BridgeServer,
) -> None:
    es_lines = ["Hola, tengo una pregunta.", "Es sobre mi maleta."]
    de_lines = ["Hallo, ich habe eine Frage.", "Es geht um mein Gepäck."]
    voice = {"voice": "f2", "pitch": 60}
    es = two_sided("caller_es", {"language": "es-MX", "voice": voice, "script": es_lines})
    de = two_sided("caller_de", {"language": "de-DE", "script": de_lines})
    run_id = await run_with_bots(bridge, [es, de], timeout_s=90)
    with RecordingReader(bridge.db_path) as reader:
        callers = reader.session_callers(run_id)
        by_name = {s.scenario_name: s for s in reader.sessions(run_id)}
    es_sid, de_sid = by_name["caller_es"].session_id, by_name["caller_de"].session_id
    assert callers[es_sid]["voice"]["espeak_voice"] == "es-419+f2"
    assert callers[es_sid]["voice"]["language"] == "es-MX"
    assert callers[de_sid]["voice"]["espeak_voice"] == "de"
    assert any(
        "user voice: espeak es-419+f2 (es-MX)" in m for m in logs(bridge.db_path, es_sid, Side.USER)
    )
    assert any(
        "user voice: espeak de (de-DE)" in m for m in logs(bridge.db_path, de_sid, Side.USER)
    )
    for name, words in (
        ("caller_es", "Es sobre mi maleta."),
        ("caller_de", "Es geht um mein Gepäck."),
    ):
        sid = by_name[name].session_id
        said = [t["text"] for t in spoken(bridge.db_path, sid, Side.USER)]
        assert said[-1] == words
        assert by_name[name].stop_reason == "end_tool"
        # Real speech reached the agent: the caller's two lines are voiced on to_agent.
        assert len(voiced_spans(bridge.db_path, sid, Channel.TO_AGENT)) >= 2


async def test_barge_in_probability_one_interrupts_every_agent_turn(bridge: BridgeServer) -> None:
    agent = [LONG, LONG, {"say": "Done. Goodbye.", "end": True}]
    behaviour = {"barge_in_probability": 1.0, "barge_in_after_s": [0.6, 1.0]}
    scenario = two_sided("barging", {"behaviour": behaviour}, agent)
    run_id = await run_with_bots(bridge, [scenario], seed=11)
    result = await rescore(bridge.db_path, run_id, ScoringConfig(scorers=["timing"]))
    outcome = result.sessions[0]
    barge_ins = outcome.get("timing.user_barge_ins")
    # Two agent turns came before a caller reply; the caller barged into both.
    assert barge_ins is not None and barge_ins.value == 2, barge_ins
    sid = outcome.session_id
    choices = [m for m in logs(bridge.db_path, sid, Side.USER) if "barge-in" in m and "reply" in m]
    assert len(choices) == 2
    cut = [t["text"] for t in spoken(bridge.db_path, sid, Side.AGENT)]
    assert sum(len(t) < len(LONG) for t in cut if t.startswith("Let me")) == 2, cut


async def test_a_long_silence_appears_in_the_recording(bridge: BridgeServer) -> None:
    quiet = {"behaviour": {"silences": [{"turn": 2, "seconds": 3.0}]}, "response_delay_s": 0.2}
    run_id = await run_with_bots(bridge, [two_sided("silent", quiet)], seed=3)
    sid = session_of(bridge.db_path, run_id, "silent")
    user = voiced_spans(bridge.db_path, sid, Channel.TO_AGENT)
    agent = voiced_spans(bridge.db_path, sid, Channel.TO_USER)
    assert len(user) == 2, user
    before = max(end for _, end in agent if end <= user[1][0])
    gap = user[1][0] - before
    # 3 s of silence plus the 0.2 s reply delay (and the end-of-turn detection, ~0.5 s).
    assert 3.2 <= gap <= 4.6, gap
    assert any("silent for 3 s (reply 2)" in m for m in logs(bridge.db_path, sid, Side.USER))


async def test_hesitations_appear_in_the_transcript_and_the_audio(bridge: BridgeServer) -> None:
    line = "I would like to change the date of my flight to next Friday please."
    plain = two_sided("fluent", {"script": ["Hi, I have a question.", line]})
    halting = two_sided("halting", {
        "script": ["Hi, I have a question.", line],
        "behaviour": {"hesitation_rate": 0.4, "hesitations": ["um", "uh"]},
    })  # fmt: skip
    run_id = await run_with_bots(bridge, [plain, halting], seed=5)
    fluent = spoken(bridge.db_path, session_of(bridge.db_path, run_id, "fluent"), Side.USER)
    halted = spoken(bridge.db_path, session_of(bridge.db_path, run_id, "halting"), Side.USER)
    words = halted[-1]["text"].split()
    fillers = [w for w in words if w in ("um,", "uh,")]
    assert fillers, halted[-1]["text"]
    assert [w for w in words if w not in ("um,", "uh,")] == line.split()
    assert fluent[-1]["text"] == line

    def length(t: dict[str, Any]) -> int:
        return int(t["end_sample_offset"]) - int(t["start_sample_offset"])

    # The fillers are spoken: the same line takes longer to say.
    assert length(halted[-1]) > length(fluent[-1]) * 1.1


async def test_the_same_seed_gives_the_same_behaviour_and_another_seed_another(
    bridge: BridgeServer,
) -> None:
    behaviour = {"pause_before_answer_s": [0.1, 0.9], "hesitation_rate": 0.3}
    lines = ["Hi, I have a question about my booking today.", "It is about my bag and my seat."]

    async def choices(seed: int) -> list[str]:
        scenario = two_sided("seeded", {"behaviour": behaviour, "script": lines})
        # The virtual clock: the seed decides what the caller does, not wall time.
        run_id = await run_with_bots(
            bridge, [scenario], seed=seed, clock=common_pb2.CLOCK_KIND_VIRTUAL
        )
        sid = session_of(bridge.db_path, run_id, "seeded")
        said = [t["text"] for t in spoken(bridge.db_path, sid, Side.USER)]
        made = [m for m in logs(bridge.db_path, sid, Side.USER) if m.startswith("caller behaviour")]
        return said + [m for m in made if "seed" not in m]

    first, again, other = await choices(21), await choices(21), await choices(22)
    assert first == again
    assert first != other


async def test_an_early_hang_up_ends_the_call_from_the_caller(bridge: BridgeServer) -> None:
    scenario = two_sided("hangs_up", {"behaviour": {"hang_up_after_turn": 2}})
    run_id = await run_with_bots(bridge, [scenario])
    with RecordingReader(bridge.db_path) as reader:
        session = reader.sessions(run_id)[0]
    assert session.stop_reason == "user_hang_up"
    assert [t["text"] for t in spoken(bridge.db_path, session.session_id, Side.USER)] == [
        "Hi, I have a question."
    ]


async def test_the_openai_voice_speaks_and_is_cached_and_its_failure_is_a_bot_error(
    bridge: BridgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAE_TTS_CACHE", str(tmp_path / "tts-cache"))
    monkeypatch.setenv("VAE_TTS_MAX_RETRIES", "0")
    voice = {"voice": {"engine": "openai", "voice": "nova"}}
    with SpeechServer() as server:
        monkeypatch.setenv("VAE_TTS_BASE_URL", server.base_url)
        first = await run_with_bots(bridge, [two_sided("openai_voice", voice)])
        asked = len(server.requests)
        second = await run_with_bots(bridge, [two_sided("openai_voice", voice)])
        assert asked == 2 and len(server.requests) == asked, "the second run hits the cache"
        assert {r["voice"] for r in server.requests} == {"nova"}
    for run_id in (first, second):
        sid = session_of(bridge.db_path, run_id, "openai_voice")
        assert len(voiced_spans(bridge.db_path, sid, Channel.TO_AGENT)) == 2
    with SpeechServer(status=500) as broken:
        monkeypatch.setenv("VAE_TTS_BASE_URL", broken.base_url)
        failed = await run_with_bots(bridge, [two_sided("openai_down", voice)])
    with RecordingReader(bridge.db_path) as reader:
        session = reader.sessions(failed)[0]
    assert session.stop_reason == "bot_error"
    assert "speech synthesis" in (session.stop_detail or "")
    assert "HTTP 500" in (session.stop_detail or "")


@pytest.mark.parametrize(
    ("name", "leaves_message"),
    [("outbound_voicemail_message", True), ("outbound_voicemail_keeps_talking", False)],
)
async def test_the_voicemail_example_passes_with_a_message_and_fails_with_a_talker(
    bridge: BridgeServer, name: str, leaves_message: bool
) -> None:
    scenario = yaml.safe_load((SUITE / f"{name}.yaml").read_text(encoding="utf-8"))
    run_id = await run_with_bots(bridge, [scenario], timeout_s=60)
    config = ScoringConfig(scorers=["db_state_assertion", "clean_exit"])
    result = await rescore(bridge.db_path, run_id, config)
    outcome = result.sessions[0]
    verdicts = {s: outcome.get(s) for s in ("DB_STATE_ASSERTION", "CLEAN_EXIT")}
    for signal, score in verdicts.items():
        assert score is not None, signal
        assert str(score.verdict) == ("passed" if leaves_message else "failed"), (signal, score)
    with RecordingReader(bridge.db_path) as reader:
        session = reader.sessions(run_id)[0]
        state = reader.final_states(session.session_id).get(Side.USER)
        caller = reader.session_caller(session.session_id)
    assert caller is not None and caller["answers_as"] == "voicemail"
    record = state.state["voicemail"] if state is not None else {}
    assert record["message_s"] > 1.0, "both agents spoke after the beep"
    assert record["cut_off"] is (not leaves_message)
    expected = "end_tool" if leaves_message else "user_hang_up"
    assert session.stop_reason == expected
    said = spoken(bridge.db_path, session.session_id, Side.USER)
    assert said[0]["text"].endswith("*beep*")


async def test_text_sessions_insert_hesitations_as_text_and_skip_the_voice(
    bridge: BridgeServer,
) -> None:
    caller = {"language": "de", "behaviour": {"hesitation_rate": 0.5, "barge_in_probability": 1.0}}
    run_id = await run_with_bots(
        bridge, [two_sided("text_caller", caller)], modality=common_pb2.MODALITY_TEXT, seed=4
    )
    sid = session_of(bridge.db_path, run_id, "text_caller")
    with RecordingReader(bridge.db_path) as reader:
        recorded = reader.session_caller(sid)
        texts = [e.payload["text"] for e in reader.events(sid, [EventKind.TRANSCRIPT])
                 if e.side is Side.USER]  # fmt: skip
    assert recorded is not None and recorded["voice"]["applies"] is False
    assert any("äh," in t or "ähm," in t for t in texts), texts
    messages = logs(bridge.db_path, sid, Side.USER)
    assert any("voice not applicable (text)" in m for m in messages)
    assert not any("barge-in" in m and "reply" in m for m in messages)


async def test_behaviours_hold_on_the_virtual_clock(bridge: BridgeServer) -> None:
    """The silence and the barge-ins are session time: exact on the virtual clock."""
    agent = [LONG, LONG, {"say": "Done. Goodbye.", "end": True}]
    behaviour = {"barge_in_probability": 1.0, "barge_in_after_s": 0.8,
                 "silences": [{"turn": 1, "seconds": 0.0}]}  # fmt: skip
    barging = two_sided("virtual_barge", {"behaviour": behaviour}, agent)
    quiet = two_sided("virtual_quiet", {"behaviour": {"silences": [{"turn": 2, "seconds": 3.0}]},
                                        "response_delay_s": 0.2})  # fmt: skip
    run_id = await run_with_bots(
        bridge, [barging, quiet], clock=common_pb2.CLOCK_KIND_VIRTUAL, seed=9
    )
    result = await rescore(bridge.db_path, run_id, ScoringConfig(scorers=["timing"]))
    by_name = {o.scenario_name: o for o in result.sessions}
    barge_ins = by_name["virtual_barge"].get("timing.user_barge_ins")
    assert barge_ins is not None and barge_ins.value == 2, barge_ins
    sid = by_name["virtual_quiet"].session_id
    user = voiced_spans(bridge.db_path, sid, Channel.TO_AGENT)
    agent_spans = voiced_spans(bridge.db_path, sid, Channel.TO_USER)
    before = max(end for _, end in agent_spans if end <= user[1][0])
    assert 3.2 <= user[1][0] - before <= 4.0, user[1][0] - before
    with RecordingReader(bridge.db_path) as reader:
        assert {reader.session_mode(s.session_id).clock for s in reader.sessions(run_id)} == {
            "virtual"
        }


class GermanCaller:
    """An LLM stand-in for the caller: two German lines, then it hangs up."""

    def __init__(self) -> None:
        self.requests: list[list[dict[str, Any]]] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request["messages"])
        if len(self.requests) == 1:
            return {"content": "Guten Tag, ich möchte meinen Flug umbuchen bitte."}
        end = {"id": "c1", "type": "function",
               "function": {"name": "hang_up", "arguments": "{}"}}  # fmt: skip
        return {"content": "Danke schön, auf Wiederhören.", "tool_calls": [end]}


async def test_the_llm_caller_is_told_its_language_and_hesitates_in_it(
    bridge: BridgeServer,
) -> None:
    from vae.bots.brains.llm import END_TOOLS, LlmBrain, LlmSettings
    from vae.bots.stand_in.openai_server import OpenAICompatibleServer

    assert END_TOOLS["user"] == "hang_up"
    llm = GermanCaller()
    caller = {"language": "de-DE", "behaviour": {"hesitation_rate": 0.5}}
    scenario = two_sided("llm_german", caller, ["Guten Tag, wie kann ich helfen?", "Gern."])
    with OpenAICompatibleServer(llm) as server:
        settings = LlmSettings(base_url=server.base_url, model="stand-in", transcript_wait_s=0.5)
        run_id = await run_with_bots(bridge, [scenario], user=lambda: LlmBrain(settings), seed=2)
    assert "Speak only the language with BCP 47 tag 'de-DE'" in llm.requests[0][0]["content"]
    sid = session_of(bridge.db_path, run_id, "llm_german")
    said = [t["text"] for t in spoken(bridge.db_path, sid, Side.USER)]
    assert said and any(w in ("äh,", "ähm,") for t in said for w in t.split()), said
    assert any("user voice: espeak de (de-DE)" in m for m in logs(bridge.db_path, sid, Side.USER))


async def test_runs_show_lists_each_callers_voice_and_behaviour(bridge: BridgeServer) -> None:
    import json

    from click.testing import CliRunner

    from vae.cli.main import vae

    quick = {"preset": "hesitant-en", "script": ["Hi, I have a question.", "It is about my bag."]}
    run_id = await run_with_bots(bridge, [two_sided("shown", quick), two_sided("plain", {})])
    text = CliRunner().invoke(vae, ["runs", "show", run_id, "--db", str(bridge.db_path)])
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    at = lines.index("callers:")
    shown = [line for line in lines[at + 1 :] if " shown: " in line]
    assert shown and "voice espeak en-US+f3 (en-US) 150 wpm pitch 55" in shown[0]
    assert "pauses 0.8-1.8 s, hesitations 15%, rate ±15%" in shown[0]
    assert not any(" plain: " in line for line in lines[at + 1 :])
    doc = json.loads(
        CliRunner()
        .invoke(vae, ["runs", "show", run_id, "--db", str(bridge.db_path), "--json"])
        .stdout
    )
    by_name = {s["scenario"]: s for s in doc["sessions"]}
    assert by_name["shown"]["caller"]["preset"] == "hesitant-en"
    assert by_name["plain"]["caller"] is None
