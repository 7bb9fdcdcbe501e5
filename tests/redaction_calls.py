"""Calls with personal data in them, spoken by eSpeak NG, for the redaction tests.

Each line is synthesised word by word (with a 60 ms gap), so the word timings
of its transcript sidecar are exact; the caller says the values (written in
the transcript as digits, or spoken as words), the agent answers. ``VALUES``
holds each type's value as the tests look for it in the store's bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from vae.bots.sound.speech import default_synthesiser

GAP_S = 0.06

#: type -> (the caller's line written, the same line spoken, the value's tokens in each)
LINES: dict[str, tuple[str, str, str, str]] = {
    "CREDIT_CARD": (
        "My card number is 4111 1111 1111 1111 thanks",
        "My card number is four one one one, one one one one, one one one one, one one one"
        " one thanks",
        "4111 1111 1111 1111",
        "four one one one, one one one one, one one one one, one one one one",
    ),
    "PHONE_NUMBER": (
        "Call me back on 07911 123456 please",
        "Call me back on oh seven nine one one, one two three four five six please",
        "07911 123456",
        "oh seven nine one one, one two three four five six",
    ),
    "EMAIL_ADDRESS": (
        "My email is john.smith@example.com okay",
        "My email is john dot smith at example dot com okay",
        "john.smith@example.com",
        "john dot smith at example dot com",
    ),
    "DATE_OF_BIRTH": (
        "I was born on 3 March 1980 I think",
        "I was born on the third of March nineteen eighty I think",
        "3 March 1980",
        "third of March nineteen eighty",
    ),
    "IBAN_CODE": (
        "Pay from GB82 WEST 1234 5698 7654 32 today",
        "Pay from G B eight two, W E S T, one two three four, five six nine eight, seven six"
        " five four, three two today",
        "GB82 WEST 1234 5698 7654 32",
        "G B eight two, W E S T, one two three four, five six nine eight, seven six five"
        " four, three two",
    ),
    "NATIONAL_ID": (
        "My social security number is 536-22-1234 right",
        "My social security number is five three six, two two, one two three four right",
        "536-22-1234",
        "five three six, two two, one two three four",
    ),
    "PERSON": (
        "Hello my name is Annabel Lee and",
        "Hello my name is Annabel Lee and",
        "Annabel Lee",
        "Annabel Lee",
    ),
    "ADDRESS": (
        "I live at 22 Baker Street London now",
        "I live at twenty two Baker Street London now",
        "22 Baker Street London",
        "twenty two Baker Street London",
    ),
}

#: What the tests search the store's bytes for (each value as it could be stored).
NEEDLES: dict[str, list[bytes]] = {
    "CREDIT_CARD": [b"4111 1111 1111 1111", b"4111111111111111", b"one one one one, one"],
    "PHONE_NUMBER": [b"07911 123456", b"nine one one, one two three"],
    "EMAIL_ADDRESS": [b"john.smith@example.com", b"smith at example dot com"],
    "DATE_OF_BIRTH": [b"3 March 1980", b"March nineteen eighty"],
    "IBAN_CODE": [b"GB82 WEST", b"W E S T"],
    "NATIONAL_ID": [b"536-22-1234", b"five three six, two two"],
    "PERSON": [b"Annabel"],
    "ADDRESS": [b"Baker Street"],
}


@dataclass
class Said:
    side: str
    text: str
    start: float
    end: float
    words: list[dict[str, Any]]


def speak(
    lines: list[tuple[str, str]], rate_hint: int = 16000
) -> tuple[np.ndarray, np.ndarray, int, list[Said]]:
    """(user, agent) int16 channels, their rate and what was said when, line after line."""
    synth = default_synthesiser("espeak")
    rate = synth.sample_rate
    pieces: dict[str, list[np.ndarray]] = {"user": [], "agent": []}
    said: list[Said] = []
    t = 0.3
    gap = np.zeros(int(GAP_S * rate), dtype=np.int16)
    pieces["user"].append(np.zeros(int(t * rate), dtype=np.int16))
    pieces["agent"].append(np.zeros(int(t * rate), dtype=np.int16))
    for side, text in lines:
        start, words = t, []
        for word in text.split():
            pcm = synth.synthesise(word.strip(",")) if word.strip(",") else np.zeros(0, np.int16)
            words.append({"word": word, "start": round(t, 4), "end": round(t + len(pcm) / rate, 4)})
            chunk = np.concatenate([pcm, gap])
            pieces[side].append(chunk)
            other = "agent" if side == "user" else "user"
            pieces[other].append(np.zeros(len(chunk), dtype=np.int16))
            t += len(chunk) / rate
        said.append(Said(side, text, round(start, 4), round(t, 4), words))
        pause = np.zeros(int(0.4 * rate), dtype=np.int16)
        pieces["user"].append(pause)
        pieces["agent"].append(pause)
        t += 0.4
    del rate_hint
    return np.concatenate(pieces["user"]), np.concatenate(pieces["agent"]), rate, said


def write_call(folder: Path, name: str, lines: list[tuple[str, str]], *,
               words: bool = True) -> list[Said]:  # fmt: skip
    """NAME.wav (caller left) and NAME.transcript.json (with timed words unless ``words``)."""
    user, agent, rate, said = speak(lines)
    folder.mkdir(parents=True, exist_ok=True)
    sf.write(str(folder / f"{name}.wav"), np.stack([user, agent], axis=1), rate, subtype="PCM_16")
    segments = []
    for s in said:
        seg: dict[str, Any] = {"speaker": s.side, "text": s.text, "start": s.start, "end": s.end}
        if words:
            seg["words"] = s.words
        segments.append(seg)
    (folder / f"{name}.transcript.json").write_text(json.dumps({"segments": segments}))
    return said


def caller_lines(form: str) -> list[tuple[str, str]]:
    """Every type's caller line (``written`` or ``spoken``), each answered by the agent."""
    index = 0 if form == "written" else 1
    out: list[tuple[str, str]] = [("agent", "North Bank, how can I help?")]
    for written_spoken in LINES.values():
        out.append(("user", written_spoken[index]))
        out.append(("agent", "Thank you."))
    return out


def value_span(said: Said, value: str) -> tuple[float, float]:
    """The seconds during which ``value`` (words of ``said.text``) was spoken."""
    tokens = said.text.split()
    want = value.split()
    for i in range(len(tokens) - len(want) + 1):
        if [w.strip(",") for w in tokens[i : i + len(want)]] == [w.strip(",") for w in want]:
            return said.words[i]["start"], said.words[i + len(want) - 1]["end"]
    raise ValueError(f"{value!r} is not in {said.text!r}")


def scan(paths: list[Path]) -> dict[str, list[str]]:
    """For each type, the needles found in the bytes of ``paths`` (those that exist)."""
    found: dict[str, list[str]] = {}
    blobs = [p.read_bytes() for p in paths if p.exists()]
    for entity, needles in NEEDLES.items():
        hits = [n.decode() for n in needles if any(n in b for b in blobs)]
        if hits:
            found[entity] = hits
    return found
