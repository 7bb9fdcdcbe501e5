"""``vae rescore --redact``: the judge reads only redacted text; checks that need a value say so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.factories import SessionSpec, ToolCallSpec, Turn, scenario, write_run
from tests.helpers import cli
from vae.bots.stand_in import offline_judge
from vae.bots.stand_in.openai_server import OpenAICompatibleServer

CARD, EMAIL = "4111111111111111", "zoe.lee@example.com"


async def test_the_judge_reads_placeholders_and_value_checks_say_so(tmp_path: Path) -> None:
    db = tmp_path / "vae.db"
    doc = scenario(
        "pay_bill",
        user={"persona": {"name": "Zoe", "background": f"Card {CARD}, email {EMAIL}."},
              "task": {"goal": "pay the bill"}},
        reference_answer={"tool": "pay", "card": CARD},
        nl_assertions=['The agent says "paid"'],
        db_state_assertions=[{"path": "card", "op": "matches", "value": "^4[0-9]{15}$"}],
        success_signals=["ACTION_MATCH", "DB_STATE_ASSERTION", "NL_ASSERTION"],
    )  # fmt: skip
    turns = [
        Turn("agent", 0.5, 1.5, "How would you like to pay?"),
        Turn("user", 2.0, 4.0, "With my card four one one one, one one one one, one one one "
             "one, one one one one, and mail the receipt to zoe dot lee at example dot com"),
        Turn("agent", 4.5, 5.5, "Done, it is paid."),
    ]  # fmt: skip
    spec = SessionSpec(
        "pay_bill",
        turns=turns,
        tool_calls=[ToolCallSpec("pay", {"card": CARD}, at_s=5.0, result={"receipt_to": EMAIL})],
        agent_state={"card": CARD, "receipts": {EMAIL: 1}},
        agent_context=[{"role": "user", "content": f"my card is {CARD}"}],
    )
    await write_run(db, [doc], [spec], run_id="bills")
    requests: list[str] = []

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        requests.append(json.dumps(request))
        return offline_judge._respond(request)

    with OpenAICompatibleServer(respond, model=offline_judge.MODEL) as judge:
        code, out, err = await cli(
            "rescore", "--run", "bills", "--db", str(db), "--judge-base-url", judge.base_url,
            "--judge-model", offline_judge.MODEL, "--judge-include-conversation",
            "--allow-unscored", "--redact", "--json",
        )  # fmt: skip
    assert code == 0, err
    assert requests, "the judge was asked"
    for body in requests:
        assert CARD not in body and "4111 1111" not in body and "zoe" not in body.lower()
        assert "one one one one" not in body
    assert any("<CREDIT_CARD>" in body for body in requests)
    scoring = json.loads(out)
    assert scoring["redaction"]["judged_on_redacted_text"] is True
    scores = {s["signal"]: s for s in scoring["sessions"][0]["scores"]}
    # Equal values compare equal as placeholders, and the score says what it compared.
    assert scores["ACTION_MATCH"]["verdict"] == "passed"
    assert "compared redacted values" in scores["ACTION_MATCH"]["detail"]["redaction"]
    # A check that needs the value itself is unscored, and says why.
    assert scores["DB_STATE_ASSERTION"]["verdict"] == "unscored"
    assert scores["DB_STATE_ASSERTION"]["error"].startswith("redacted_value:")
    # The recording itself is unchanged: --redact is what the judge reads, not a rewrite.
    code, shown, _ = await cli("scores", "show", scoring["scoring_id"], "--db", str(db), "--json")
    assert code == 0 and json.loads(shown)["redaction"]["by"] == "rescore --redact"
    assert CARD.encode() in db.read_bytes()
