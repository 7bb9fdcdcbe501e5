"""A results directory in the established framework's layout, built for tests.

Follows the documented on-disk details (seed-system.md §2 and §8), quirks
included: a Python-repr LLM context inside a JSON string, an empty context,
double-encoded tools JSON, a plain-list ``final_agent_response.json`` for an
action-match domain (no DB hash file there), a killed attempt with
``__KILLED__`` and a WAV cut short whose header declares every frame, a
crashed directory with nothing but a header-only log, and malformed files.
"""

from __future__ import annotations

import json
import wave
from pathlib import Path
from typing import Any

import numpy as np

from tests.conftest import tone
from vae.recordings.canonical import state_hash

RATE = 16000
START = "2024-06-01T10:22:40.000000"
PIZZA = "restaurant__pizza"
RETAIL = "tau2_retail__cancel"
BROKEN = "qa__broken"
CRASHED = "qa__crashed"
RETAIL_DB = {"orders": {"#W1": {"status": "cancelled", "total": 12.5}}}


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2))


def stereo(
    seconds: float, user: list[tuple[float, float]], agent: list[tuple[float, float]]
) -> np.ndarray:
    """Stereo int16: tones on L (user) and R (agent) over the given spans."""
    out = np.zeros((int(seconds * RATE), 2), dtype=np.int16)
    for column, spans, freq in ((0, user, 220.0), (1, agent, 440.0)):
        for start, end in spans:
            a, b = int(start * RATE), int(end * RATE)
            wave_ = tone((b - a) / RATE + 0.01, RATE, freq)
            out[a:b, column] = wave_[: b - a]
    return out


def write_wav(path: Path, samples: np.ndarray, *, keep_frames: int | None = None) -> None:
    """A PCM16 WAV; with ``keep_frames`` the data is cut short but the header keeps its size."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(samples.shape[1])
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(samples.astype("<i2").tobytes())
    if keep_frames is not None:
        blob = path.read_bytes()
        header = len(blob) - samples.size * 2
        path.write_bytes(blob[: header + keep_frames * samples.shape[1] * 2])


def conversation_log(turns: list[tuple[str, float, float, str]], stop: str | None) -> str:
    lines = [
        "RTVI Evaluation Bridge - Conversation Log",
        "=" * 80,
        f"Start Time: {START}",
        "=" * 80,
        "",
    ]
    for role, start, end, text in turns:
        lines.append(f"[{start:7.3f}s - {end:7.3f}s] ({end - start:.3f}s) {role.upper()}: {text}")
        if role == "agent":
            lines.append("  → Response latency: 512.0ms")
    if stop is not None:
        lines += ["", f"End time: {START}", f"Stop reason: {stop}", "=" * 80]
    return "\n".join(lines) + "\n"


def metrics(
    name: str, turns: list[tuple[str, float, float, str]], stop: str, **extra: Any
) -> dict[str, Any]:
    base = {
        "total_turns": len(turns),
        "duration_seconds": 4.0,
        "turns": [{"timestamp": START, "role": r, "text": t} for r, _, _, t in turns],
        "latency_stats": {
            "count": 1,
            "mean_ms": 500.0,
            "p50_ms": 500.0,
            "p95_ms": 500.0,
            "min_ms": 500.0,
            "max_ms": 500.0,
        },
        "latencies": [{"user_transcript": "u", "agent_transcript": "a", "latency_ms": 500.0}],
        "scenario_name": name,
        "scenario_directory": f"/old/eval/{name}",
        "scenario_duration": 4.2,
        "stop_reason": stop,
        "clean_exit": stop == "[EXIT]",
        "token_usage": {
            "agent": {"n_calls": 3, "prompt": 301, "completion": 50},
            "user": {"n_calls": 2, "prompt": 100, "completion": 21},
        },
    }
    base.update(extra)
    return base


def metadata(name: str, domain: str, signals: list[str], **extra: Any) -> dict[str, Any]:
    data = {
        "name": name,
        "domain": domain,
        "description": f"{name} test",
        "max_duration": 120,
        "noise_config": None,
        "ignore_capitalization": False,
        "ignore_punctuation": False,
        "clean_text": False,
        "disallow_extra_items": False,
        "success_signals": signals,
    }
    data.update(extra)
    return data


def config(root: Path, meta: dict[str, Any], reference: Any, tools: dict[str, Any]) -> None:
    cfg = root / "scenario_config"
    write_json(cfg / "metadata.json", meta)
    if reference is not None:
        write_json(cfg / "reference_answer.json", reference)
    (cfg / "agent_prompt.txt").write_text("You are a helpful agent.")
    (cfg / "user_prompt.txt").write_text("You are a caller.")
    write_json(cfg / "agent_tools.json", json.dumps(tools))  # a JSON string holding JSON
    write_json(cfg / "user_tools.json", json.dumps({}))


def build(root: Path) -> Path:
    """Write the whole results directory under ``root``; return its path."""
    run = root / "eval_20240601_102233"
    write_json(
        run / "run_args.json",
        {
            "invocations": [
                {
                    "started_at": "2024-06-01T10:22:33.000000",
                    "argv": ["run_evaluation.py"],
                    "parsed_args": {
                        "min_agent_turns": 1,
                        "strict_match": False,
                        "judge_api_key": "<redacted>",
                    },
                    "resolved_scenario_names": [PIZZA, RETAIL, BROKEN, CRASHED],
                },
                {
                    "started_at": "2024-06-01T11:00:00.000000",
                    "argv": ["run_evaluation.py", "--resume"],
                    "parsed_args": {
                        "min_agent_turns": 1,
                        "strict_match": False,
                        "judge_api_key": "<redacted>",
                    },
                },
            ]
        },
    )
    _pizza(run / PIZZA)
    _retail(run)
    write_json(
        run / "all_metrics.json",
        [json.loads((run / n / "metrics.json").read_text()) for n in (PIZZA, RETAIL)],
    )
    _broken(run / BROKEN)
    crashed = run / CRASHED
    crashed.mkdir(parents=True)
    (crashed / "conversation_log.txt").write_text(conversation_log([], None))
    return run


def _pizza(d: Path) -> None:
    turns = [
        ("agent", 0.1, 1.0, "Hello, Pizza Place."),
        ("user", 1.5, 2.5, "A large pepperoni."),
        ("agent", 3.0, 3.9, "Done, goodbye."),
    ]
    write_wav(d / "conversation_log.wav", stereo(4.0, [(1.5, 2.5)], [(0.1, 1.0), (3.0, 3.9)]))
    (d / "conversation_log.txt").write_text(conversation_log(turns, "[EXIT]"))
    write_json(
        d / "metrics.json",
        metrics(
            PIZZA,
            turns,
            "[EXIT]",
            is_action_match=True,
            success_breakdown={
                "passed": ["is_action_match", "clean_exit"],
                "failed": [],
                "not_applicable": [],
                "excluded": [],
            },
            is_successful=True,
            is_task_successful=True,
        ),
    )
    # Action-match domain: a plain list of order dicts, no final_scenario_db_hash.txt.
    write_json(d / "final_agent_response.json", [{"pizza": "pepperoni", "size": "large"}])
    config(
        d,
        metadata(
            PIZZA, "restaurant", ["is_action_match", "clean_exit"], ignore_capitalization=True
        ),
        {"pizza": "Pepperoni", "size": "large"},
        {"place_order": {"pizza": "the pizza"}},
    )
    repr_context = str(
        [
            {"role": "system", "content": "You are a helpful agent.", "name": None},
            {"role": "assistant", "content": "It's done", "tool_calls": None, "final": True},
        ]
    )
    write_json(d / "bot_logs_agent" / "llm_context.json", repr_context)
    write_json(d / "bot_logs_user" / "llm_context.json", [])


def _retail(run: Path) -> None:
    d = run / RETAIL
    turns = [("agent", 0.2, 1.0, "Retail desk."), ("user", 1.4, 2.6, "Cancel order W1.")]
    action = {"type": "cancel_order", "args": {"order_id": "#W1"}, "result": "ok"}
    write_wav(d / "conversation_log.wav", stereo(4.0, [(1.4, 2.6)], [(0.2, 1.0)]))
    (d / "conversation_log.txt").write_text(conversation_log(turns, "[TIMEOUT]"))
    write_json(
        d / "metrics.json",
        metrics(
            RETAIL,
            turns,
            "[TIMEOUT]",
            is_action_match="N/A",
            db_state_match=True,
            db_state_expected_hash=state_hash(RETAIL_DB),
            db_state_actual_hash=state_hash(RETAIL_DB),
            is_successful=False,
            is_task_successful=True,
        ),
    )
    write_json(d / "final_agent_response.json", [{"actions": [dict(action, side="agent")]}])
    (d / "final_scenario_db_hash.txt").write_text(f"db_hash: {state_hash(RETAIL_DB)}\n")
    config(
        d,
        metadata(
            RETAIL,
            "tau2_retail",
            ["db_state_match", "nl_assertion", "clean_exit"],
            nl_assertions=["The agent confirms the cancellation."],
            expected_db_hash=state_hash(RETAIL_DB),
        ),
        {"actions": [{"type": "cancel_order", "args": {"order_id": "#W1"}}]},
        {"cancel_order": {"order_id": "the order"}},
    )
    write_json(
        d / "judge_result.json",
        {
            "score": 1.0,
            "reason": "fine",
            "judge_input": {"system_prompt": "s", "user_content": "u"},
            "nl_assertion_verdicts": [
                {"index": 0, "assertion": "x", "passed": True, "reason": "ok"}
            ],
            "nl_assertion_pass_count": 1,
            "nl_assertion_total": 1,
            "nl_assertion_pass_rate": 1.0,
        },
    )
    write_json(
        d / "bot_logs_agent" / "llm_context.json",
        [{"role": "system", "content": "You are a helpful agent."}],
    )
    # The first attempt, moved aside by a resume: header-only log, WAV cut short.
    killed = run / f"{RETAIL}.killed.20240601_110000"
    killed.mkdir(parents=True)
    (killed / "__KILLED__").write_text("")
    (killed / "conversation_log.txt").write_text(conversation_log([], None))
    write_wav(killed / "conversation_log.wav", stereo(2.0, [(0.5, 1.0)], []), keep_frames=12000)
    config(killed, metadata(RETAIL, "tau2_retail", ["db_state_match"]), None, {})


def _broken(d: Path) -> None:
    d.mkdir(parents=True)
    (d / "metrics.json").write_text("{not json")
    (d / "final_agent_response.json").write_text("[{")
    write_json(d / "bot_logs_agent" / "llm_context.json", "[{'role': 'system', 'content': ")
    write_wav(d / "conversation_log.wav", stereo(1.0, [(0.1, 0.5)], []))
    config(
        d, metadata(BROKEN, "qa", ["judge_passed", "bogus_signal"], max_duration="long"), None, {}
    )
