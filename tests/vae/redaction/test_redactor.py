"""The redaction engine: each type written and spoken, custom patterns, JSON, names, offline."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
import yaml

from tests.redaction_calls import LINES
from vae.bots.stand_in.openai_server import OpenAICompatibleServer
from vae.redaction.audio import mask
from vae.redaction.config import (
    SCHEMA,
    NamesEndpoint,
    RedactionConfig,
    RedactionConfigError,
    load_config,
    parse_config,
)
from vae.redaction.detect import Finding
from vae.redaction.names import NamesEndpointError
from vae.redaction.redactor import Redactor, make_redactor
from vae.redaction.words import spans


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return make_redactor()


@pytest.mark.parametrize("form", ["written", "spoken"])
@pytest.mark.parametrize("entity", sorted(LINES))
def test_each_type_written_and_spoken_is_redacted(
    redactor: Redactor, entity: str, form: str
) -> None:
    written, spoken, value_w, value_s = LINES[entity]
    text, value = (written, value_w) if form == "written" else (spoken, value_s)
    out, found = redactor.text(text)
    assert f"<{entity}>" in out, (out, found)
    assert value not in out
    # What stays is the words around the value.
    assert out.split()[0] == text.split()[0]


@pytest.mark.parametrize(
    "line",
    [
        "It is booking S J one zero four two. Please move it to March fourteenth.",
        "Thank you. Your current account balance is two hundred and ten dollars.",
        "Sure, here it is.",
        "Done, you are now in seat fourteen C, on the aisle.",
        "Move booking one to March twenty.",
    ],
)
def test_example_lines_without_personal_data_are_left_alone(redactor: Redactor, line: str) -> None:
    assert redactor.text(line) == (line, [])


def test_placeholders_are_never_found_again(redactor: Redactor) -> None:
    once, found = redactor.text("card 4111 1111 1111 1111, mail ann@example.com")
    assert len(found) == 2
    assert redactor.text(once) == (once, [])


def test_custom_regex_and_chosen_types(tmp_path: Path) -> None:
    path = tmp_path / "redaction.yaml"
    path.write_text(
        "entities: [EMAIL_ADDRESS]\n"
        "custom:\n  - type: MEMBER_ID\n    pattern: 'M-?\\d{6}'\n"
        "audio: {mask: silence}\n"
    )
    config = load_config(path)
    jsonschema.validate(yaml.safe_load(path.read_text()), SCHEMA)
    r = make_redactor(config)
    out, _ = r.text("member M-123456, card 4111 1111 1111 1111, ann@example.com")
    # Only what the file asks for: the card number stays.
    assert out == "member <MEMBER_ID>, card 4111 1111 1111 1111, <EMAIL_ADDRESS>"
    # The spoken member number too (spoken: true by default).
    assert r.text("member M one two three four five six")[0] == "member <MEMBER_ID>"


@pytest.mark.parametrize(
    ("doc", "message", "schema_too"),
    [
        ({"entities": ["CREDIT_CARD", "SSN"]}, "entities[1]: unknown value 'SSN'", True),
        ({"custom": [{"type": "X", "pattern": "("}]}, "custom[0].pattern: not a valid", False),
        ({"custom": [{"type": "lower", "pattern": "x"}]}, "custom[0].type", True),
        ({"custom": [{"type": "EMPTY", "pattern": "a*"}]}, "matches the empty string", False),
        ({"audio": {"mask": "noise"}}, "audio.mask: unknown value 'noise'", True),
        ({"colour": 1}, "colour: unknown field", True),
        ({"names": {"model": "m"}}, "names.base_url: required", True),
    ],
)
def test_bad_configs_name_the_field(doc: dict[str, Any], message: str, schema_too: bool) -> None:
    with pytest.raises(RedactionConfigError) as caught:
        parse_config(doc, "cfg")
    assert message in str(caught.value)
    if schema_too:  # the schema agrees with the checks (one source of truth)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(doc, SCHEMA)


def test_a_malformed_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "r.yaml"
    bad.write_text("entities: [CREDIT_CARD\n")
    with pytest.raises(RedactionConfigError, match="not valid YAML"):
        load_config(bad)


def test_json_values_keys_and_numbers(redactor: Redactor) -> None:
    doc = {
        "card_number": 4111111111111111,
        "ann@example.com": {"phone": "+44 7911 123456", "visits": 1234567},
        "started_unix_nanos": 1717236000000000000,
        "notes": ["born 3 March 1980"],
    }
    out, found = redactor.value(doc)
    assert out == {
        "card_number": "<CREDIT_CARD>",
        "<EMAIL_ADDRESS>": {"phone": "<PHONE_NUMBER>", "visits": 1234567},
        "started_unix_nanos": 1717236000000000000,
        "notes": ["born <DATE_OF_BIRTH>"],
    }
    assert ("$.card_number", "CREDIT_CARD") in found
    assert ("$.<key>", "EMAIL_ADDRESS") in found


def test_names_from_an_openai_compatible_endpoint() -> None:
    asked: list[str] = []

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        text = request["messages"][-1]["content"]
        asked.append(text)
        items = [{"type": "PERSON", "text": "Priya"}] if "Priya" in text else []
        return {"content": json.dumps({"items": items})}

    with OpenAICompatibleServer(respond, model="names") as server:
        config = RedactionConfig(names=NamesEndpoint(server.base_url, "names"))
        r = make_redactor(config)
        out, found = r.text("Priya said she would call back; priya again.")
        r.close()
    assert out == "<PERSON> said she would call back; <PERSON> again."
    assert [f.entity for f in found] == ["PERSON", "PERSON"] and len(asked) == 1

    def broken(request: dict[str, Any]) -> dict[str, Any]:
        return {"content": "not json"}

    with OpenAICompatibleServer(broken, model="names") as server:
        r = make_redactor(RedactionConfig(names=NamesEndpoint(server.base_url, "names")))
        with pytest.raises(NamesEndpointError, match="not the JSON asked for"):
            r.text("Priya called")
        r.close()


def test_offline_no_language_model_and_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError("no network in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    r = make_redactor(RedactionConfig())
    assert r.text("write to zoe@example.co.uk")[0] == "write to <EMAIL_ADDRESS>"
    assert not [m for m in sys.modules if m.startswith(("en_core_web", "transformers"))]


def test_words_cover_the_finding_and_the_mask_keeps_length() -> None:
    text = "card 4111 1111 thanks"
    words = [{"word": w, "start": i * 1.0, "end": i * 1.0 + 0.5}
             for i, w in enumerate(["card", "four", "one", "one", "one", "one", "one", "one",
                                    "one", "thanks"])]  # fmt: skip
    ((_, a, b),) = spans(text, [Finding("CREDIT_CARD", 5, 14)], words)
    assert (a, b) == (1.0, 8.5)
    assert spans(text, [Finding("X", 0, 4)], [])[0][1:] == (None, None)
    rate = 8000
    speech = (np.sin(np.arange(rate) * 0.3) * 9000).astype(np.int16)
    toned = mask(speech, rate, [(1000, 5000)], "tone", 1000.0, -18.0)
    silent = mask(speech, rate, [(1000, 5000)], "silence")
    assert len(toned) == len(silent) == len(speech)
    assert np.array_equal(toned[:1000], speech[:1000]) and not np.any(silent[1000:5000])
    spectrum = np.abs(np.fft.rfft(toned[1100:4900].astype(float)))
    assert abs(np.argmax(spectrum) * rate / 3800 - 1000) < 5
