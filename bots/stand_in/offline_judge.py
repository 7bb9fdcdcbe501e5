"""A deterministic, rule-based STAND-IN for an LLM judge, for the offline demo.

It is not a language model and understands nothing: it answers the scorer's
judge prompt (tagged sections ``<reference>``, ``<prediction>``,
``<nl_assertions>``, ``<agent_context>``, ``<user_context>``,
``<conversation>``) with simple keyword rules, so NL_ASSERTION and
JUDGE_PASSED get real verdicts through the real ``openai`` client path with no
network and no GPU. Use a real judge (``vae rescore --judge-base-url ...``)
for real evaluations.

Rules:

- an NL assertion passes when every phrase quoted in it ("...") appears in
  the evidence (the sides' context histories, the recorded actions and any
  conversation turns, case-insensitive); an assertion that says "not",
  "never" or "no" passes when none of them appears; an assertion with no
  quoted phrase fails, saying so;
- the score is the share of the reference answer's leaf values (strings and
  numbers) found among the recorded actions; 1.0 when there is no reference.
"""

from __future__ import annotations

import json
import re
from typing import Any

from vae.bots.stand_in.openai_server import OpenAICompatibleServer

_SECTION = re.compile(r"<(?P<tag>[a-z_]+)>\n(?P<body>.*?)\n</(?P=tag)>", re.DOTALL)
_NUMBERED = re.compile(r"^\s*(\d+)\.\s+(.*)$")
_QUOTED = re.compile(r'"([^"]+)"')
_NEGATION = re.compile(r"\b(not|never|no|without)\b", re.IGNORECASE)

MODEL = "vae-offline-judge"


def sections(text: str) -> dict[str, str]:
    return {m.group("tag"): m.group("body") for m in _SECTION.finditer(text)}


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, bool) or value is None:
        return []
    return [str(value)]


def judge_assertion(assertion: str, evidence: str) -> tuple[bool, str]:
    phrases = _QUOTED.findall(assertion)
    if not phrases:
        return False, "the offline stand-in judge can only check quoted phrases; none given"
    found = [p for p in phrases if p.lower() in evidence]
    if _NEGATION.search(_QUOTED.sub("", assertion)):
        ok = not found
        reason = "absent as required" if ok else f"found {found[0]!r} though it must not appear"
        return ok, reason
    missing = [p for p in phrases if p not in found]
    if missing:
        return False, f"{missing[0]!r} does not appear in the conversation or actions"
    return True, "every quoted phrase appears"


def judge(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The verdict JSON for one judge request."""
    text = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
    parts = sections(text)
    evidence = " ".join(
        parts.get(tag, "")
        for tag in ("agent_context", "user_context", "prediction", "conversation")
    ).lower()
    verdicts = []
    for line in parts.get("nl_assertions", "").splitlines():
        m = _NUMBERED.match(line)
        if m:
            passed, reason = judge_assertion(m.group(2), evidence)
            verdicts.append({"index": int(m.group(1)), "passed": passed, "reason": reason})
    reference_text = parts.get("reference", "none").strip()
    if reference_text in ("", "none"):
        score, reason = 1.0, "no reference answer to compare"
    else:
        try:
            leaves = _leaves(json.loads(reference_text))
        except json.JSONDecodeError:
            leaves = [reference_text]
        prediction = parts.get("prediction", "").lower()
        hits = [leaf for leaf in leaves if leaf.lower() in prediction]
        score = len(hits) / len(leaves) if leaves else 1.0
        missing = [leaf for leaf in leaves if leaf not in hits]
        reason = (
            "every reference value appears in the recorded actions"
            if not missing
            else f"{len(missing)} of {len(leaves)} reference values missing from the "
            f"recorded actions, e.g. {missing[0]!r}"
        )
    return {"score": round(score, 4), "reason": reason, "nl_assertion_verdicts": verdicts}


def _respond(request: dict[str, Any]) -> dict[str, Any]:
    return {"content": json.dumps(judge(request.get("messages", [])))}


def offline_judge_server(port: int = 0, host: str = "127.0.0.1") -> OpenAICompatibleServer:
    """The stand-in judge as an OpenAI-compatible server (call ``start()``)."""
    return OpenAICompatibleServer(_respond, model=MODEL, port=port, host=host)
