"""The report's caller line: voice, behaviours and voicemail of a session, escaped."""

from __future__ import annotations

from vae.bridge_service.session.caller_record import caller_record
from vae.scorer_service.report.sections.caller import caller_line, caller_summary


def test_the_caller_line_names_voice_behaviours_and_voicemail() -> None:
    side = {"preset": "diego-es-mx", "behaviour": {"barge_in_probability": 0.5,
            "silences": [{"turn": 2, "seconds": 6}]}}  # fmt: skip
    text = caller_summary(caller_record(side, "audio"))
    assert text.startswith("voice espeak es-419+m2 (es-MX) 175 wpm pitch 45; preset diego-es-mx")
    assert "hesitations 10%" in text and "barge-in 50%" in text
    assert "silence 6 s before turn 2" in text
    mail = caller_record({"answers_as": "voicemail", "voicemail": {"within_s": 15}}, "audio")
    assert "answers as voicemail: expects the agent to leave message within 15.0 s" in (
        caller_summary(mail)
    )


def test_text_sessions_say_the_voice_does_not_apply_and_no_caller_shows_nothing() -> None:
    assert "(not applicable: a text session)" in caller_summary(
        caller_record({"language": "de"}, "text")
    )
    assert caller_record({"script": ["hi"]}, "audio") is None
    assert caller_line({"caller": None}) == ""


def test_hostile_text_is_escaped() -> None:
    hostile = {"error": "</script><script>alert(1)</script>"}
    line = caller_line({"caller": hostile})
    assert "<script>" not in line and "&lt;/script&gt;" in line
