"""Importing an established-framework results directory, then rescoring it."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from tests.interop import nemo_fixture as fx
from vae.bots.stand_in.openai_server import OpenAICompatibleServer
from vae.cli.main import vae
from vae.recordings.errors import StorageError
from vae.recordings.importers import ImportSourceError, import_nemo
from vae.recordings.importers.nemo import importer as nemo
from vae.recordings.importers.nemo.files import parse_context, read_wav
from vae.recordings.models import Channel, EventKind, SessionStatus, Side, Verdict
from vae.recordings.read.reader import RecordingReader
from vae.recordings.read.selection import ResumeState, classify_resume
from vae.recordings.scenarios.model import SuccessSignal
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.recordings.write.writer import open_writer
from vae.scorer_service.config import JudgeSettings, ScoringConfig
from vae.scorer_service.scoring.rescore import rescore

RUN_ID = "2024-06-01T10-22-33"


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return fx.build(tmp_path / "src")


def sid(name: str, attempt: int = 1) -> str:
    return f"{RUN_ID}_{name}_a{attempt}"


async def test_import_maps_every_file(results: Path, db_path: Path) -> None:
    report = await import_nemo(db_path, results)
    assert report.run_id == RUN_ID
    with RecordingReader(db_path) as r:
        run = r.get_run(RUN_ID)
        assert run is not None and run.source == "import:nemo"
        assert run.options["min_agent_turns"] == 1 and run.options["end_policy"] == "tool-only"
        # Every frozen scenario validates; stored signal values map onto vae's names.
        docs = {s.scenario_name: s.scenario for s in r.run_scenarios(RUN_ID)}
        assert set(docs) == {fx.PIZZA, fx.RETAIL, fx.BROKEN, fx.CRASHED}
        pizza = scenario_from_dict(docs[fx.PIZZA])
        assert pizza.success_signals == [SuccessSignal.ACTION_MATCH, SuccessSignal.CLEAN_EXIT]
        assert pizza.ignore_capitalization and pizza.domain == "restaurant"
        assert pizza.agent.resources.tools == {"place_order": {"pizza": "the pizza"}}
        retail = scenario_from_dict(docs[fx.RETAIL])
        assert retail.reference_answer == [{"type": "cancel_order", "args": {"order_id": "#W1"}}]
        assert retail.agent.extras["expected_db_hash"] == fx.state_hash(fx.RETAIL_DB)
        assert retail.nl_assertions == ["The agent confirms the cancellation."]

        pizza_s = r.session(sid(fx.PIZZA))
        assert pizza_s is not None and pizza_s.status is SessionStatus.ENDED
        assert (pizza_s.stop_reason, pizza_s.clean_exit) == ("end_tool", True)
        assert (pizza_s.user_turns, pizza_s.agent_turns) == (1, 2)
        assert pizza_s.duration_s == pytest.approx(4.0)

        # Both channels of the stereo WAV, on the session clock, sample for sample.
        user = r.read_channel(sid(fx.PIZZA), Channel.USER)
        agent = r.read_channel(sid(fx.PIZZA), Channel.AGENT)
        assert user.sample_rate == agent.sample_rate == fx.RATE
        assert len(user.samples) == len(agent.samples) == 4 * fx.RATE
        loud_user = np.flatnonzero(np.abs(user.samples) > 1000)
        assert loud_user[0] / fx.RATE == pytest.approx(1.5, abs=0.01)
        assert loud_user[-1] / fx.RATE == pytest.approx(2.5, abs=0.01)
        assert np.abs(agent.samples[int(1.5 * fx.RATE) : int(2.5 * fx.RATE)]).max() == 0

        events = r.events(sid(fx.PIZZA))
        transcripts = [e for e in events if e.kind is EventKind.TRANSCRIPT]
        assert [(e.side, e.payload["text"]) for e in transcripts][1] == (
            Side.USER,
            "A large pepperoni.",
        )
        assert transcripts[1].bridge_ns - pizza_s.started_ns == int(2.5e9)
        calls = [e.payload for e in events if e.kind is EventKind.TOOL_CALL]
        assert calls == [
            {
                **calls[0],
                "is_write": True,
                "side": "agent",
                "action": {"pizza": "pepperoni", "size": "large"},
            }
        ]
        tokens = [
            e.payload for e in events if e.kind is EventKind.TOKEN_USAGE and e.side is Side.AGENT
        ]
        assert len(tokens) == 3 and sum(t["prompt_tokens"] for t in tokens) == 301
        assert any(e.kind is EventKind.END_CONVERSATION for e in events)

        # Final states: hash only (the DB was never written), contexts parsed.
        pizza_fs = r.final_states(sid(fx.PIZZA))
        assert pizza_fs[Side.AGENT].state is None and pizza_fs[Side.AGENT].state_hash is None
        assert pizza_fs[Side.AGENT].context[0] == {
            "role": "system",
            "content": "You are a helpful agent.",
            "name": None,
        }
        assert pizza_fs[Side.USER].context == []
        retail_fs = r.final_states(sid(fx.RETAIL, 2))[Side.AGENT]
        assert retail_fs.state is None
        assert retail_fs.state_hash == fx.state_hash(fx.RETAIL_DB)

        # What does not map is kept raw beside the run and the sessions.
        names = {a.name for a in r.artifacts(RUN_ID)}
        assert {"run_args.json", "all_metrics.json", "judge_result.json", "metrics.json"} <= names
        judge = [a for a in r.artifacts(RUN_ID, sid(fx.RETAIL, 2)) if a.name == "judge_result.json"]
        assert json.loads(judge[0].content)["nl_assertion_pass_rate"] == 1.0

        # The framework's own verdicts form the first scoring.
        original = {(s.session_id, s.signal): s for s in r.scores(f"{RUN_ID}.nemo-original")}
        assert original[(sid(fx.PIZZA), "ACTION_MATCH")].verdict is Verdict.PASSED
        assert original[(sid(fx.RETAIL, 2), "DB_STATE_MATCH")].verdict is Verdict.PASSED
        assert original[(sid(fx.RETAIL, 2), "CLEAN_EXIT")].verdict is Verdict.FAILED
        assert original[(sid(fx.RETAIL, 2), "ACTION_MATCH")].verdict is Verdict.NOT_APPLICABLE
        first = r.scoring(f"{RUN_ID}.nemo-original")
        assert first is not None and first.status == "complete"
        assert first.summary["success_rate"] == 0.5 and first.summary["sessions"] == 2
        assert first.summary["signals"]["CLEAN_EXIT"]["failed"] == 1


async def test_killed_crashed_and_broken_directories(results: Path, db_path: Path) -> None:
    report = await import_nemo(db_path, results)
    by_name = {s.name: s for s in report.scenarios}
    with RecordingReader(db_path) as r:
        # The killed first attempt is kept, superseded, with the audio that was there.
        killed = r.session(sid(fx.RETAIL, 1))
        assert killed is not None and killed.status is SessionStatus.SUPERSEDED
        assert "killed" in killed.superseded_reason
        assert len(r.read_channel(sid(fx.RETAIL, 1), Channel.USER).samples) == 12000
        assert any("cut short" in p for p in by_name[fx.RETAIL].attempts[0].problems)
        assert r.latest_attempts(RUN_ID)[fx.RETAIL].attempt == 2
        assert killed.stop_reason == "attempt_crashed" and not killed.clean_exit
        # A crashed directory with no successor is unfinished: a resume re-runs it.
        states = {d.scenario_name: d.state for d in classify_resume(r, RUN_ID)}
        assert states[fx.CRASHED] is ResumeState.IN_FLIGHT
        assert by_name[fx.CRASHED].attempts[0].status == "crashed"
        crashed = r.session(sid(fx.CRASHED))
        assert crashed is not None and crashed.stop_reason == "attempt_crashed"
        assert "no usable metrics.json" in crashed.stop_detail
        assert [a.status for a in by_name[fx.RETAIL].attempts] == ["superseded (crashed)", "ended"]
        run = r.get_run(RUN_ID)
        assert run is not None and run.status == "failed"
        assert states[fx.PIZZA] is ResumeState.COMPLETED
    assert any(fx.CRASHED in p and "crashed or unfinished" in p for p in report.problems)
    broken = by_name[fx.BROKEN]
    problems = " | ".join(broken.problems + broken.attempts[0].problems)
    for expected in (
        "metrics.json: malformed JSON",
        "final_agent_response.json: malformed JSON",
        "llm_context.json: context is neither JSON nor a Python literal",
        "max_duration: must be a number",
        "'bogus_signal' is not one of",
    ):
        assert expected in problems
    assert any("scenario_config/ missing" in p for p in by_name[fx.CRASHED].problems)


async def test_rescore_of_imported_run_gives_expected_signals(results: Path, db_path: Path) -> None:
    report = await import_nemo(db_path, results)
    result = await rescore(db_path, RUN_ID[:10], ScoringConfig(no_judge=True))
    with RecordingReader(db_path) as r:
        scores = {(s.session_id, s.signal): s for s in r.scores(result.scoring.scoring_id)}
    pizza, retail = sid(fx.PIZZA), sid(fx.RETAIL, 2)
    expect = {
        (pizza, "ACTION_MATCH"): Verdict.PASSED,  # capitalisation ignored as the scenario says
        (pizza, "CLEAN_EXIT"): Verdict.PASSED,
        (pizza, "is_successful"): Verdict.PASSED,
        (retail, "ACTION_MATCH"): Verdict.PASSED,  # {"actions": [...]} reference unwrapped
        (retail, "CLEAN_EXIT"): Verdict.FAILED,  # [TIMEOUT]
        (retail, "is_successful"): Verdict.FAILED,
    }
    assert {k: scores[k].verdict for k in expect} == expect
    # Only hashes of the final DB exist and the expected DB is known only by its hash:
    # never a spurious failure (not applicable, or passed where hashes are compared).
    db_match = scores[(retail, "DB_STATE_MATCH")].verdict
    assert db_match in (Verdict.NOT_APPLICABLE, Verdict.PASSED)
    assert scores[(pizza, "tokens.agent.prompt")].value == 301
    assert scores[(pizza, "tokens.agent.calls")].value == 3
    assert scores[(pizza, "bot.agent.nemo_response_latency")].value == pytest.approx(0.5)
    # Timing comes from the imported audio: the agent's first speech starts at 0.1 s.
    first_audio = scores[(pizza, "timing.time_to_first_agent_audio_s")].value
    assert first_audio == pytest.approx(0.1, abs=0.05)
    # A crashed attempt is scored but never decided; the original verdicts are still there.
    crashed = scores[(sid(fx.CRASHED), "is_successful")]
    assert crashed.verdict is Verdict.UNSCORED and crashed.error == "unfinished: attempt_crashed"
    assert report.scoring_id and report.scoring_id != result.scoring.scoring_id


def test_cli_import_json_and_errors(results: Path, tmp_path: Path, db_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(vae, ["import", "nemo", str(results), "--db", str(db_path), "--json"])
    assert ok.exit_code == 0, ok.output
    data = json.loads(ok.stdout)
    assert data["run_id"] == RUN_ID and len(data["scenarios"]) == 4
    twice = runner.invoke(vae, ["import", "nemo", str(results), "--db", str(db_path), "--json"])
    assert twice.exit_code == 2 and f"already imported as run {RUN_ID}" in twice.output
    again = runner.invoke(
        vae, ["import", "nemo", str(results), "--db", str(db_path), "--json", "--again"]
    )
    assert again.exit_code == 0 and json.loads(again.stdout)["run_id"] == f"{RUN_ID}-2"
    taken = runner.invoke(
        vae, ["import", "nemo", str(results), "--db", str(db_path), "--run-id", RUN_ID, "--again"]
    )
    assert taken.exit_code == 2 and "already exists" in taken.output
    missing = runner.invoke(vae, ["import", "nemo", str(tmp_path / "nope"), "--db", str(db_path)])
    assert missing.exit_code == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = runner.invoke(vae, ["import", "nemo", str(empty), "--db", str(db_path)])
    assert nothing.exit_code == 1 and "no scenario directories" in nothing.output
    text = runner.invoke(
        vae, ["import", "nemo", str(results), "--db", str(db_path), "--run-id", "named", "--again"]
    )
    assert text.exit_code == 0 and "vae rescore --run named" in text.output
    assert "malformed JSON" in text.output
    env = {"VAE_DB": str(db_path), "VAE_IMPORT_RUN_ID": "from-env"}
    by_env = runner.invoke(vae, ["import", "nemo", str(results), "--json", "--again"], env=env)
    assert by_env.exit_code == 0 and json.loads(by_env.stdout)["run_id"] == "from-env"
    assert "NeMo evaluation results" in runner.invoke(vae, ["import", "nemo", "--help"]).output


async def test_import_refuses_a_directory_without_scenarios(tmp_path: Path) -> None:
    with pytest.raises(ImportSourceError):
        await import_nemo(tmp_path / "vae.db", tmp_path)


def test_context_parsing_never_runs_code(tmp_path: Path) -> None:
    flag = tmp_path / "ran"
    hostile = f"__import__('pathlib').Path({str(flag)!r}).write_text('x')"
    value, problem = parse_context(hostile)
    assert value is None and "neither JSON nor a Python literal" in problem
    assert not flag.exists()
    assert parse_context("[{'role': 'user', 'content': 'hi', 'x': None, 'y': True}]") == (
        [{"role": "user", "content": "hi", "x": None, "y": True}],
        "",
    )
    assert parse_context('[{"role": "user"}]') == ([{"role": "user"}], "")
    assert parse_context("") == ([], "")


def test_truncated_wav_reads_what_is_there(tmp_path: Path) -> None:
    samples = fx.stereo(1.0, [(0.0, 1.0)], [(0.0, 1.0)])
    fx.write_wav(tmp_path / "a.wav", samples, keep_frames=4001)
    wav, problem = read_wav(tmp_path / "a.wav")
    assert problem == "" and wav is not None
    assert wav.truncated and wav.frames == 4001 and wav.declared_frames == fx.RATE
    assert np.array_equal(wav.samples, samples[:4001])
    (tmp_path / "b.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    assert read_wav(tmp_path / "b.wav")[0] is None


async def test_imported_contexts_and_assertions_reach_the_judge(
    results: Path, db_path: Path
) -> None:
    """The judge sees each side's imported context (even a Python-repr one) and NL assertions."""

    def verdict(request: dict[str, object]) -> dict[str, object]:
        text = json.dumps(request["messages"])
        body = {
            "score": 1.0,
            "reason": "matches",
            "nl_assertion_verdicts": [{"index": 0, "passed": "cancel" in text, "reason": "seen"}],
        }
        return {"content": json.dumps(body)}

    await import_nemo(db_path, results)
    with OpenAICompatibleServer(verdict) as judge:
        config = ScoringConfig(judge=JudgeSettings(base_url=judge.base_url, model="vae-offline"))
        result = await rescore(db_path, RUN_ID, config)
        prompts = [json.dumps(r["messages"]) for r in judge.requests]
    with RecordingReader(db_path) as r:
        scores = {(s.session_id, s.signal): s for s in r.scores(result.scoring.scoring_id)}
    assert scores[(sid(fx.RETAIL, 2), "NL_ASSERTION")].verdict is Verdict.PASSED
    assert scores[(sid(fx.PIZZA), "JUDGE_PASSED")].verdict is Verdict.PASSED
    # The pizza agent's context was saved as a Python repr: the judge got it parsed.
    assert any("It's done" in p and "You are a helpful agent." in p for p in prompts)


async def test_an_unknown_stop_reason_is_kept_and_reads_unfinished(
    results: Path, db_path: Path
) -> None:
    """A framework stop string vae does not know is never a finished bot_error."""
    path = results / fx.PIZZA / "metrics.json"
    doc = json.loads(path.read_text())
    doc["stop_reason"] = "[LLM_QUOTA]"
    path.write_text(json.dumps(doc))
    report = await import_nemo(db_path, results)
    pizza = next(s for s in report.scenarios if s.name == fx.PIZZA)
    assert pizza.attempts[0].status == "unfinished ([LLM_QUOTA])"
    assert any("'[LLM_QUOTA]' is not one vae knows" in p for p in pizza.attempts[0].problems)
    assert any(fx.PIZZA in p and "crashed or unfinished" in p for p in report.problems)
    with RecordingReader(db_path) as r:
        session = r.session(sid(fx.PIZZA))
        assert session is not None and session.stop_reason == "[LLM_QUOTA]"
        states = {d.scenario_name: d for d in classify_resume(r, RUN_ID)}
        assert states[fx.PIZZA].state is ResumeState.IN_FLIGHT
        # The framework's verdicts for it are not imported as if it had finished.
        (original,) = r.scorings(RUN_ID)
        assert r.scores(original.scoring_id, session.session_id) == []
    result = await rescore(db_path, RUN_ID, ScoringConfig(no_judge=True))
    outcome = next(o for o in result.sessions if o.scenario_name == fx.PIZZA)
    success = next(s for s in outcome.scores if s.signal == "is_successful")
    assert success.verdict is Verdict.UNSCORED and success.error == "unfinished: [llm_quota]"


async def test_a_store_failing_mid_import_never_leaves_a_completed_run(
    results: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real lock held beyond the writer's timeout: the run and its scoring read failed."""
    for name in (fx.BROKEN, fx.CRASHED):  # left whole, this import would read completed
        shutil.rmtree(results / name)
    holder = sqlite3.connect(db_path, isolation_level=None, timeout=10)
    original = nemo.import_scenario

    async def locking(writer: Any, state: Any, ordinal: int, dirs: Any) -> Any:
        if ordinal == 1:  # the run, a scenario and the first scoring are stored
            await writer.flush()
            holder.execute("BEGIN IMMEDIATE")
        return await original(writer, state, ordinal, dirs)

    monkeypatch.setattr(nemo, "import_scenario", locking)
    # The import shares this process's writer for the file: one with a short lock timeout.
    async with open_writer(
        db_path, flush_interval_s=0.01, lock_timeout_s=1.0, busy_timeout_ms=200
    ) as writer:
        with pytest.raises(StorageError):
            await asyncio.wait_for(import_nemo(db_path, results), 30)
        assert writer.failed.is_set() and writer.pending == 0
        holder.execute("ROLLBACK")  # room again: the kept statuses are salvaged at close
    holder.close()
    with RecordingReader(db_path) as r:
        run = r.get_run(RUN_ID)
        assert run is not None and str(run.status) == "failed", run
        assert "import stopped" in run.error
        scorings = r.scorings(RUN_ID)
        assert scorings and all(s.status == "failed" for s in scorings), scorings
