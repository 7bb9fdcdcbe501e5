"""What differs between the settings behind two scorings and their two runs.

A verdict flip is only explained when the reader also sees what was changed on
purpose: the judge's model, prompt or threshold, an override, a scorer's
version, the agent bot's name or version, a run option. Nested settings are
flattened to dotted keys (``judge.threshold``) and only keys whose values
differ are reported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from vae.recordings.models import RunRecord, ScoringRecord, SessionRecord


@dataclass(frozen=True)
class ConfigDifference:
    #: Dotted key, e.g. ``scoring.judge.threshold``, ``run.options.seed``, ``agent bot``.
    key: str
    a: str | None
    b: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "a": self.a, "b": self.b}


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def flatten(value: Any, prefix: str) -> dict[str, str]:
    """``{"judge": {"model": "m"}}`` -> ``{"<prefix>.judge.model": "m"}``; lists stay whole."""
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: _text(value)}


def bots(sessions: list[SessionRecord], side: str) -> str:
    """The distinct ``name version`` of one side's bots in a run, comma-separated."""
    names: list[str] = []
    for s in sessions:
        info = s.user_bot if side == "user" else s.agent_bot
        name = " ".join(str(info.get(k, "")) for k in ("name", "version")).strip()
        if name and name not in names:
            names.append(name)
    return ", ".join(names)


def _scoring_settings(s: ScoringRecord | None) -> dict[str, str]:
    if s is None:
        return {}
    out = flatten(s.config, "scoring")
    out.pop("scoring.label", None)  # a label names a scoring; it changes nothing
    # The judge is identified by its model and prompt hash (below); its endpoint's
    # address (often a loopback port that changes every run) is not a setting.
    out.pop("scoring.judge.base_url", None)
    out["scoring.judge_model"] = s.judge_model
    out["scoring.prompt_hash"] = s.prompt_hash
    out.update(flatten(s.versions, "scoring.versions"))
    return out


def _run_settings(run: RunRecord, sessions: list[SessionRecord]) -> dict[str, str]:
    out = flatten(run.options, "run.options")
    out["run.vae_version"] = run.vae_version
    out["run.source"] = run.source
    out["run.tags"] = _text(sorted(run.tags))
    out["agent bot"] = bots(sessions, "agent")
    out["user bot"] = bots(sessions, "user")
    return out


def config_differences(
    run_a: RunRecord,
    sessions_a: list[SessionRecord],
    scoring_a: ScoringRecord | None,
    run_b: RunRecord,
    sessions_b: list[SessionRecord],
    scoring_b: ScoringRecord | None,
) -> list[ConfigDifference]:
    """Every setting whose value differs, bots and scoring first, then run options."""
    a = {**_run_settings(run_a, sessions_a), **_scoring_settings(scoring_a)}
    b = {**_run_settings(run_b, sessions_b), **_scoring_settings(scoring_b)}

    def order(key: str) -> tuple[int, str]:
        rank = 0 if key.endswith(" bot") else 1 if key.startswith("scoring.") else 2
        return rank, key

    return [
        ConfigDifference(k, a.get(k), b.get(k))
        for k in sorted(set(a) | set(b), key=order)
        if a.get(k) != b.get(k)
    ]
