"""Which caller voices exist: eSpeak NG's languages and variants, BCP 47 tags mapped onto them.

Why a table beside the scenario model: ``vae validate`` (the schema check) must
refuse a language or voice the reference bots could not speak, before a call is
placed, and only the bots load eSpeak; the bridge sends the bots the resolved
eSpeak voice name (``es-419+f2``). The table is the set of voices the
``espeakng-loader`` wheel ships (``espeak-ng-data/lang`` and ``voices/!v``); a
test holds it equal to the installed data, so an upgrade that adds or drops a
voice shows up there.

A language is a BCP 47 tag (``es``, ``de-DE``, ``es-MX``, ``pt-BR``); it maps
to eSpeak's most specific voice: the whole tag when eSpeak has it (case
aside), a regional fallback (Latin American Spanish is ``es-419``), then the
tag's primary language. A variant (``f2``, ``m3``, ``klatt`` …) changes the
speaker, not the language: eSpeak's voice name is then ``<language>+<variant>``.
"""

from __future__ import annotations

import re

#: eSpeak NG 1.52 language voices (espeak-ng-data/lang).
_LANGS = """
    af am an ar as az ba be bg bn bpy bs ca ca-ba ca-nw ca-va chr cmn cmn-Latn-pinyin cs cv cy
    da de el en en-029 en-GB-scotland en-GB-x-gbclan en-GB-x-gbcwmd en-GB-x-rp en-Shaw en-US
    en-US-nyc eo es es-419 et eu fa fa-Latn fi fo fr fr-BE fr-CH ga gd gn grc gu hak haw he hi hr
    ht hu hy hyw ia id io is it ja jbo ka kaa kk kl kn ko kok ku ky la lb lfn lt ltg lv mi mk ml
    mr ms mt mto my nb nci ne nl nog om or pa pap piqd pl pt pt-BR py qdb qu quc qya ro ru ru-LV
    ru-cl sd shn si sjn sk sl smj sq sr sv sw ta te th ti tk tn tr tt ug uk ur uz vi
    vi-VN-x-central vi-VN-x-south xex yue yue-Latn-jyutping"""
ESPEAK_LANGUAGES = tuple(_LANGS.split())
#: eSpeak NG 1.52 speaker variants (espeak-ng-data/voices/!v), joined to a language by ``+``.
_VARIANTS = """
    Alex Alicia Andrea Andy Annie AnxiousAndy Demonic Denis Diogo Gene Gene2 Henrique Hugo
    Jacky Lee Marco Mario Michael Mike Nguyen Reed RicishayMax RicishayMax2 RicishayMax3 Storm
    Tweaky UniRobot adam anika anikaRobot announcer antonio aunty belinda benjamin boris caleb
    croak david ed edward edward2 f1 f2 f3 f4 f5 fast grandma grandpa gustave ian iven iven2 iven3
    iven4 john kaukovalta klatt klatt2 klatt3 klatt4 klatt5 klatt6 linda m1 m2 m3 m4 m5 m6 m7 m8
    marcelo max michel miguel mike2 norbert pablo paul pedro quincy rob robert robosoft robosoft2
    robosoft3 robosoft4 robosoft5 robosoft6 robosoft7 robosoft8 sandro shelby steph steph2 steph3
    travis victor whisper whisperf zac"""
ESPEAK_VARIANTS = tuple(_VARIANTS.split())
#: The voices of OpenAI's /v1/audio/speech (other compatible servers have their own names:
#: the ``openai`` engine passes any name on; this list is what ``vae`` suggests).
OPENAI_VOICES = (
    "alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer", "verse",
)  # fmt: skip
ENGINES = ("espeak", "openai")
#: eSpeak's limits: words per minute, and pitch on its 0-100 scale.
RATE_RANGE = (80, 450)
PITCH_RANGE = (0, 100)
DEFAULT_RATE_WPM = 205
DEFAULT_PITCH = 50

_BCP47 = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")
_BY_LOWER = {name.lower(): name for name in ESPEAK_LANGUAGES}
_VARIANTS_LOWER = {name.lower(): name for name in ESPEAK_VARIANTS}
#: Spanish outside Spain: eSpeak's Latin American voice.
_LATAM = {
    "mx", "ar", "co", "cl", "pe", "ve", "ec", "gt", "cu", "bo", "do", "hn", "py", "sv", "ni",
    "cr", "pa", "uy", "pr", "us", "419",
}  # fmt: skip
#: Tags whose eSpeak voice has another name.
_ALIASES = {"zh": "cmn", "zh-cn": "cmn", "zh-hk": "yue", "no": "nb", "en-gb": "en", "fil": "tl"}


def is_bcp47(tag: str) -> bool:
    """Whether ``tag`` is shaped like a BCP 47 language tag (``es``, ``de-DE``, ``es-419``)."""
    return bool(_BCP47.match(tag))


def espeak_language(tag: str) -> str | None:
    """The eSpeak language voice for a BCP 47 tag, or None when eSpeak has none."""
    if not is_bcp47(tag):
        return None
    lower = tag.lower()
    if lower in _ALIASES and _ALIASES[lower] in _BY_LOWER:
        return _BY_LOWER[_ALIASES[lower]]
    if lower in _BY_LOWER:
        return _BY_LOWER[lower]
    subtags = lower.split("-")
    if subtags[0] == "es" and len(subtags) > 1 and subtags[1] in _LATAM:
        return "es-419"
    for end in range(len(subtags) - 1, 0, -1):
        prefix = "-".join(subtags[:end])
        if prefix in _ALIASES:
            return _BY_LOWER.get(_ALIASES[prefix])
        if prefix in _BY_LOWER:
            return _BY_LOWER[prefix]
    return None


def espeak_variant(name: str) -> str | None:
    """The eSpeak variant spelt ``name`` (case aside), or None."""
    return _VARIANTS_LOWER.get(name.lower())


def espeak_voice_name(language: str, variant: str = "") -> str:
    """eSpeak's ``SetVoiceByName`` argument: ``es`` or ``es+f2``."""
    return f"{language}+{variant}" if variant else language


def language_problem(tag: str, engine: str = "espeak") -> str | None:
    """Why ``tag`` cannot be spoken by ``engine`` (None: it can)."""
    if not is_bcp47(tag):
        return f"{tag!r} is not a BCP 47 language tag (e.g. 'es', 'de-DE', 'pt-BR')"
    if engine == "espeak" and espeak_language(tag) is None:
        return (
            f"eSpeak NG has no voice for language {tag!r} "
            "(`vae schema caller-presets` lists the languages)"
        )
    return None


def variant_problem(name: str) -> str | None:
    """Why ``name`` is not an eSpeak variant (None: it is)."""
    if espeak_variant(name) is not None:
        return None
    import difflib

    close = difflib.get_close_matches(name, ESPEAK_VARIANTS, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"eSpeak NG has no voice {name!r} (variants: m1-m8, f1-f5, klatt ...){hint}"
