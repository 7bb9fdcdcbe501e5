"""The demo's stand-in judge: its keyword rules, served through the real openai client."""

from __future__ import annotations

import json

import openai

from vae.bots.stand_in.offline_judge import judge, judge_assertion, offline_judge_server


def prompt(reference: object, prediction: object, assertions: list[str], context: str) -> str:
    nl = "\n".join(f"{i}. {a}" for i, a in enumerate(assertions)) or "none"
    return (
        f"<reference>\n{json.dumps(reference)}\n</reference>\n\n"
        f"<prediction>\n{json.dumps(prediction)}\n</prediction>\n\n"
        f"<nl_assertions>\n{nl}\n</nl_assertions>\n\n"
        f"<agent_context>\n{context}\n</agent_context>"
    )


def test_quoted_phrases_must_appear_and_negated_ones_must_not() -> None:
    evidence = "booked for march 14, a prepaid label follows"
    assert judge_assertion('The agent confirms "March 14".', evidence)[0]
    assert not judge_assertion('The agent says "March 15".', evidence)[0]
    assert judge_assertion('The agent does not offer "store credit".', evidence)[0]
    ok, reason = judge_assertion('The agent never mentions "prepaid label".', evidence)
    assert not ok and "prepaid label" in reason
    ok, reason = judge_assertion("The agent is polite.", evidence)
    assert not ok and "quoted" in reason


def test_score_is_the_share_of_reference_values_in_the_actions() -> None:
    ref = {"tool": "change_flight", "booking_id": "SJ1", "new_date": "2026-03-20"}
    good = [{"tool": "change_flight", "booking_id": "SJ1", "new_date": "2026-03-20"}]
    bad = [{"tool": "change_flight", "booking_id": "SJ1", "new_date": "2026-03-21"}]
    msg = [{"role": "user", "content": prompt(ref, good, ['says "done"'], "Done.")}]
    verdict = judge(msg)
    assert verdict["score"] == 1.0
    assert verdict["nl_assertion_verdicts"] == [
        {"index": 0, "passed": True, "reason": "every quoted phrase appears"}
    ]
    verdict = judge([{"role": "user", "content": prompt(ref, bad, [], "")}])
    assert verdict["score"] == round(2 / 3, 4)
    assert "2026-03-20" in verdict["reason"]
    assert judge([{"role": "user", "content": prompt(None, [], [], "")}])["score"] == 1.0


def test_served_over_http_to_the_openai_client() -> None:
    with offline_judge_server() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="offline")
        reply = client.chat.completions.create(
            model="vae-offline-judge",
            messages=[
                {"role": "system", "content": "grade"},
                {"role": "user", "content": prompt({"a": "x"}, [{"a": "x"}], [], "")},
            ],
        )
        assert [m.id for m in client.models.list()] == ["vae-offline-judge"]
        client.close()
    content = reply.choices[0].message.content
    assert content is not None and json.loads(content)["score"] == 1.0
    assert reply.usage is not None and reply.usage.prompt_tokens > 0
