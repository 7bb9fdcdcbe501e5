"""The caller keys of a scenario: validated with positions, described, resolved one way.

``vae validate`` (through the schema check) refuses what the reference bots
could not speak — an unknown eSpeak voice or language, a value out of range,
a voicemail the agent would talk over — each with its file position; the
voices table matches the eSpeak data that is installed.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import pytest
from click.testing import CliRunner

from vae.cli.main import vae
from vae.recordings.scenarios import caller, voices
from vae.recordings.scenarios.caller_settings import CallerConfigError, caller_from_config
from vae.recordings.scenarios.check import check
from vae.recordings.scenarios.parse import scenario_from_dict
from vae.recordings.scenarios.presets import PRESETS
from vae.recordings.scenarios.schema import scenario_schema


def problems(user: dict[str, object], **top: object) -> list[tuple[str, str]]:
    return [(i.field, i.problem) for i in check({"name": "x", "user": user, **top})]


def test_the_voice_table_is_the_installed_espeak_data() -> None:
    spec = importlib.util.find_spec("espeakng_loader")
    assert spec is not None and spec.origin, "the reference bots' eSpeak NG wheel"
    data = Path(spec.origin).parent / "espeak-ng-data"
    installed = {p.name for p in (data / "lang").rglob("*") if p.is_file()}
    assert set(voices.ESPEAK_LANGUAGES) == installed
    variants = {p.name for p in (data / "voices" / "!v").iterdir()} - {"Mr serious"}
    assert set(voices.ESPEAK_VARIANTS) == variants
    assert {"es", "de", "fr", "pt-BR"} <= set(voices.ESPEAK_LANGUAGES)


@pytest.mark.parametrize(
    ("tag", "espeak"),
    [("es", "es"), ("es-ES", "es"), ("es-MX", "es-419"), ("de-DE", "de"), ("de-AT", "de"),
     ("en-US", "en-US"), ("en-GB", "en"), ("pt-BR", "pt-BR"), ("pt-PT", "pt"), ("zh", "cmn"),
     ("FR-ch", "fr-CH"), ("xx", None), ("es_ES", None), ("", None)],
)  # fmt: skip
def test_a_bcp47_tag_maps_to_the_most_specific_espeak_voice(tag: str, espeak: str | None) -> None:
    assert voices.espeak_language(tag) == espeak


def test_bad_values_are_refused_at_their_field() -> None:
    assert problems({"language": "xx"}) == [
        ("user.language", "eSpeak NG has no voice for language 'xx' "
         "(`vae schema caller-presets` lists the languages)")]  # fmt: skip
    assert problems({"language": "español"})[0][0] == "user.language"
    assert problems({"voice": {"voice": "m9"}})[0][0] == "user.voice.voice"
    assert "no voice 'm9'" in problems({"voice": {"voice": "m9"}})[0][1]
    assert problems({"voice": {"language": "qq"}})[0][0] == "user.voice.language"
    assert problems({"voice": {"engine": "festival"}})[0][0] == "user.voice.engine"
    assert problems({"voice": {"rate_wpm": 20}}) == [
        ("user.voice.rate_wpm", "must be at least 80, got 20")]  # fmt: skip
    assert problems({"behaviour": {"barge_in_probability": 1.5}}) == [
        ("user.behaviour.barge_in_probability", "must be at most 1, got 1.5")]  # fmt: skip
    assert problems({"behaviour": {"pause_before_answer_s": [2, 1]}}) == [
        ("user.behaviour.pause_before_answer_s", "min 2 is above max 1")]  # fmt: skip
    assert problems({"preset": "maria"})[0] == (
        "user.preset", "unknown caller preset 'maria'; did you mean 'maria-es'?")  # fmt: skip
    assert problems({"answers_as": "robot"})[0][0] == "user.answers_as"
    assert problems({"answers_as": "voicemail"})[0][0] == "first_speaker"
    assert problems({"preset": "office-voicemail"})[0][0] == "first_speaker"  # a preset's too
    assert problems({"voicemail": {"expect": "hang_up"}}, first_speaker="user") == [
        ("user.voicemail", "needs `answers_as: voicemail`")]  # fmt: skip
    agent = check({"name": "x", "agent": {"behaviour": {"hesitation_rate": 0.2}}})
    assert [(i.field, i.problem) for i in agent] == [
        ("agent.behaviour", "only the caller (`user`) has this")]  # fmt: skip


def test_good_callers_pass_and_the_openai_engine_takes_any_voice_name() -> None:
    assert problems({"language": "es-MX", "voice": {"voice": "F2", "rate_wpm": 150}}) == []
    assert problems({"voice": {"engine": "openai", "voice": "af_bella", "language": "xx"}}) == []
    assert (
        problems({"preset": "lena-de", "behaviour": {"silences": [{"turn": 2, "seconds": 8}]}})
        == []
    )


def test_vae_validate_names_the_file_position(tmp_path: Path) -> None:
    path = tmp_path / "callers.yaml"
    path.write_text(
        "name: bad-callers\nuser:\n  language: es\n  voice:\n    voice: f9\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(vae, ["validate", str(path)])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0].startswith(f"{path}:5:12: user.voice.voice: ")
    path.write_text("name: bad-lang\nuser:\n  language: tlh\n", encoding="utf-8")
    result = CliRunner().invoke(vae, ["validate", str(path)])
    assert result.exit_code == 1
    assert result.stdout.startswith(f"{path}:3:13: user.language: eSpeak NG has no voice")


def test_a_preset_is_merged_under_the_scenarios_own_keys() -> None:
    settings = caller_from_config({"preset": "lena-de", "voice": {"rate_wpm": 140}})
    assert settings.voice.language == "de-DE" and settings.voice.voice == "f4"
    assert settings.voice.rate_wpm == 140 and settings.voice.espeak_name == "de+f4"
    assert settings.behaviour.pause_before_answer_s == (0.5, 1.2)
    for name in PRESETS:  # every preset resolves and passes `vae validate`
        assert caller_from_config({"preset": name}).preset == name
        assert problems({"preset": name}, first_speaker="user") == [], name
    with pytest.raises(CallerConfigError) as err:
        caller_from_config({"behaviour": {"silences": [{"turn": 0, "seconds": 3}]}})
    assert err.value.field == "behaviour.silences[0].turn"


def test_voicemail_expectations_become_db_assertions_once() -> None:
    doc = {"name": "vm", "first_speaker": "user",
           "user": {"answers_as": "voicemail", "voicemail": {"expect": "hang_up"}}}  # fmt: skip
    sc = scenario_from_dict(doc)
    paths = [(a["path"], a["op"]) for a in sc.db_state_assertions]
    assert paths == [("voicemail.message_s", "lt"), ("voicemail.cut_off", "eq")]
    again = scenario_from_dict(sc.to_dict())  # a frozen scenario re-read: not doubled
    assert again.db_state_assertions == sc.db_state_assertions


def test_every_caller_field_is_in_the_schema_and_described() -> None:
    defs = scenario_schema()["$defs"]
    side = defs["SideSpec"]["properties"]
    for cls in (caller.CallerKeys, caller.CallerVoice, caller.CallerBehaviour,
                caller.CallerSilence, caller.VoicemailSpec):  # fmt: skip
        for f in dataclasses.fields(cls):
            key = f"{cls.__name__}.{f.name}"
            assert key in caller.FIELD_DOCS, key
            where = side if cls is caller.CallerKeys else defs[cls.__name__]["properties"]
            assert f.name in where, key
            assert where[f.name]["description"] == caller.FIELD_DOCS[key]


def test_caller_presets_prints_one_json_document() -> None:
    import json

    result = CliRunner().invoke(vae, ["schema", "caller-presets"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert set(doc["presets"]) == set(PRESETS)
    assert "es-419" in doc["espeak_languages"] and "f2" in doc["espeak_variants"]
