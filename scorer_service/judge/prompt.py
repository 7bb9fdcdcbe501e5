"""The judge's prompt (versioned and hashed) and its output validation.

The system prompt holds the instructions and is replaceable per scoring; its
hash (with :data:`PROMPT_VERSION`, which covers the input layout) is stored
with the scoring so two scorings say whether they asked the same question.
The user message carries the evidence in tagged sections, side-aware as in the
established judge: the user simulator's actions are judged on what the agent
told it to do. The bridge's transcript turns are included only when asked
(``include_conversation``), since cross-talk makes them noisy.

Output must be JSON ``{"score": 0..1, "reason": str, "nl_assertion_verdicts":
[{"index": int, "passed": bool, "reason": str}]}``; it is found as the whole
reply, a fenced block, or the first ``{...}`` in the text, then validated. Any
failure is a :class:`JudgeOutputError`, which becomes ``judge_error`` — never
an agent failure.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from vae.scorer_service.context import ScoringContext

PROMPT_VERSION = "1"

DEFAULT_TEMPLATE = """\
You are grading a phone conversation between a voice agent (the system under \
test) and a simulated caller (the user). Decide whether the agent completed the \
caller's task correctly and followed its instructions.

Compare the recorded actions with the reference answer. Actions are tagged with \
the side that performed them: judge agent-side actions against the reference \
and the agent's instructions; judge user-side actions on whether the agent \
guided the caller to them correctly. Wording, politeness or presentation issues \
may lower the score by at most 0.05.

For every numbered NL assertion, decide whether it holds for this conversation.

Reply with JSON only:
{"score": <number from 0 to 1>, "reason": "<one paragraph>",
 "nl_assertion_verdicts": [{"index": <n>, "passed": <true|false>, "reason": "<why>"}]}
"""


class JudgeOutputError(ValueError):
    """The judge's reply was not the JSON we asked for."""


@dataclass(frozen=True)
class AssertionVerdict:
    index: int
    passed: bool
    reason: str


@dataclass(frozen=True)
class JudgeVerdict:
    score: float
    reason: str
    verdicts: list[AssertionVerdict] = field(default_factory=list)


def prompt_hash(template: str) -> str:
    text = f"vae-judge-prompt:{PROMPT_VERSION}\n{template or DEFAULT_TEMPLATE}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _section(tag: str, value: Any) -> str:
    body = value if isinstance(value, str) else json.dumps(value, indent=1, ensure_ascii=False)
    return f"<{tag}>\n{body}\n</{tag}>"


def build_messages(
    ctx: ScoringContext, template: str, include_conversation: bool
) -> list[dict[str, str]]:
    """The chat messages for one session (deterministic: they are the cache key)."""
    sc = ctx.scenario
    parts = [
        _section("scenario", {"name": sc.name, "domain": sc.domain, "description": sc.description}),
        _section(
            "agent_task",
            {"goal": sc.agent.task.goal, "instructions": sc.agent.actions.instructions},
        ),
        _section(
            "user_task", {"goal": sc.user.task.goal, "instructions": sc.user.actions.instructions}
        ),
        _section("reference", sc.reference_answer if sc.reference_answer is not None else "none"),
        _section("prediction", ctx.write_actions),
        _section(
            "nl_assertions",
            "\n".join(f"{i}. {a}" for i, a in enumerate(sc.nl_assertions)) or "none",
        ),
    ]
    for side in ("agent", "user"):
        history = ctx.context_history(side)
        if history:
            parts.append(_section(f"{side}_context", history))
    if include_conversation:
        lines = [f"[{t.t_s:8.2f}s] {t.side.upper()}: {t.text}" for t in ctx.transcripts]
        parts.append(_section("conversation", "\n".join(lines) or "none"))
    return [
        {"role": "system", "content": template or DEFAULT_TEMPLATE},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def _find_json(text: str) -> Any:
    candidates = [text.strip()]
    candidates += _FENCE.findall(text)
    candidates += _OBJECT.findall(text)
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    raise JudgeOutputError(f"no JSON object in the judge's reply: {text[:200]!r}")


def parse_verdict(text: str) -> JudgeVerdict:
    """Validate the judge's reply; raise :class:`JudgeOutputError` saying what is wrong."""
    data = _find_json(text)
    if not isinstance(data, dict):
        raise JudgeOutputError("the judge's JSON is not an object")
    score = data.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise JudgeOutputError(f"'score' must be a number, got {score!r}")
    if not 0.0 <= float(score) <= 1.0:
        raise JudgeOutputError(f"'score' must be between 0 and 1, got {score}")
    reason = data.get("reason", "")
    if not isinstance(reason, str):
        raise JudgeOutputError("'reason' must be a string")
    raw = data.get("nl_assertion_verdicts") or []
    if not isinstance(raw, list):
        raise JudgeOutputError("'nl_assertion_verdicts' must be a list")
    verdicts = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("passed"), bool):
            raise JudgeOutputError(f"nl_assertion_verdicts[{i}] needs a boolean 'passed'")
        index = item.get("index", i)
        if isinstance(index, bool) or not isinstance(index, int):
            raise JudgeOutputError(f"nl_assertion_verdicts[{i}].index must be an integer")
        verdicts.append(AssertionVerdict(index, item["passed"], str(item.get("reason", ""))))
    return JudgeVerdict(float(score), reason, verdicts)
