"""Finding and checking the files of ``vae import calls``: every input treated as hostile.

Why separate from the import itself: nothing is written until every call has
been found and checked, so a bad file costs a clear error and nothing else.

A **call** is one of

- a stereo WAV/FLAC file (``NAME.wav``): one channel is the caller, the other
  the agent (``caller_channel``, left by default — the convention of vae's own
  stereo export and of NeMo's ``conversation_log.wav``);
- a pair of mono files ``NAME.user.wav`` (or ``NAME.caller.wav``) and
  ``NAME.agent.wav`` (FLAC as well), at the same sample rate.

Beside it, optionally: ``NAME.transcript.json`` (a list of ``{speaker, text,
start, end}``, or ``{"segments": [...]}``; speaker ``user``/``caller`` or
``agent``; times in seconds; each segment may list its timed ``words: [{word,
start, end}]``, as Whisper's verbose_json does) and ``NAME.scenario.json`` (or ``.yaml``/``.yml``:
a scenario document). A directory argument stands for the calls in it (not
recursive). Every file must be a regular file under its size limit; audio must
be PCM-decodable by libsndfile, mono or stereo as its role requires, at 8–48
kHz, and at most ``max_seconds`` long; transcripts must be well-formed with
finite, ordered times.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import soundfile as sf

from vae.recordings.errors import ScenarioError
from vae.recordings.importers.nemo.layout import ImportSourceError
from vae.recordings.scenarios.parse import scenario_from_dict

AUDIO = (".wav", ".flac")
MIN_RATE, MAX_RATE = 8000, 48000
MAX_AUDIO_BYTES = 1024**3
MAX_SIDECAR_BYTES = 10 * 1024**2
MAX_SEGMENTS = 100_000
MAX_TEXT = 10_000
MAX_WORDS = 10_000
_ROLE = re.compile(r"^(?P<name>.+)\.(?P<role>user|caller|agent)$", re.IGNORECASE)
_SPEAKERS = {"user": "user", "caller": "user", "customer": "user", "agent": "agent"}


@dataclass(frozen=True)
class CallFiles:
    name: str
    #: A stereo file, or (caller, agent) mono files.
    stereo: Path | None = None
    caller: Path | None = None
    agent: Path | None = None
    transcript: Path | None = None
    scenario: Path | None = None

    @property
    def audio(self) -> list[Path]:
        return [p for p in (self.stereo, self.caller, self.agent) if p is not None]


@dataclass(frozen=True)
class TranscriptLine:
    side: str
    text: str
    start_s: float
    end_s: float
    #: Timed words (``[{word, start, end}]``, seconds of the call), as Whisper's
    #: verbose_json gives them; empty when the sidecar has none.
    words: tuple[tuple[str, float, float], ...] = ()


def _regular(path: Path, limit: int) -> Path:
    if not path.exists():
        raise ImportSourceError(f"{path}: no such file")
    if not path.is_file():
        raise ImportSourceError(f"{path}: not a regular file")
    size = path.stat().st_size
    if size > limit:
        raise ImportSourceError(f"{path}: {size} bytes, more than the {limit}-byte limit")
    if size == 0:
        raise ImportSourceError(f"{path}: empty file")
    return path.resolve()


def _sidecar(audio_dir: Path, name: str, kind: str, suffixes: tuple[str, ...]) -> Path | None:
    for suffix in suffixes:
        candidate = audio_dir / f"{name}.{kind}{suffix}"
        if candidate.exists():
            return _regular(candidate, MAX_SIDECAR_BYTES)
    return None


def find_calls(paths: list[Path]) -> list[CallFiles]:
    """Group the audio files named (or found in named directories) into calls."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files.extend(sorted(c for c in p.iterdir() if c.suffix.lower() in AUDIO))
        elif p.suffix.lower() in AUDIO:
            files.append(_regular(p, MAX_AUDIO_BYTES))
        elif p.exists():
            raise ImportSourceError(f"{p}: not a .wav or .flac file")
        else:
            raise ImportSourceError(f"{p}: no such file or directory")
    if not files:
        raise ImportSourceError("no .wav or .flac files among the paths given")
    stereo: dict[str, Path] = {}
    pairs: dict[str, dict[str, Path]] = {}
    for f in files:
        f = _regular(f, MAX_AUDIO_BYTES)
        m = _ROLE.match(f.stem)
        if m:
            role = "agent" if m["role"].lower() == "agent" else "caller"
            slot = pairs.setdefault(m["name"], {})
            if role in slot and slot[role] != f:
                raise ImportSourceError(f"{f}: a second {role} file for call {m['name']!r}")
            slot[role] = f
        else:
            if f.stem in stereo and stereo[f.stem] != f:
                raise ImportSourceError(f"{f}: a second file for call {f.stem!r}")
            stereo[f.stem] = f
    calls: list[CallFiles] = []
    for name in sorted(set(stereo) | set(pairs)):
        if name in stereo and name in pairs:
            raise ImportSourceError(f"call {name!r}: both a stereo file and mono files")
        if name in stereo:
            where = stereo[name].parent
            calls.append(CallFiles(name, stereo=stereo[name], **_sidecars(where, name)))
            continue
        slot = pairs[name]
        missing = [r for r in ("caller", "agent") if r not in slot]
        if missing:
            raise ImportSourceError(
                f"call {name!r}: the {missing[0]} file ({name}.{missing[0]}.wav) is missing"
            )
        where = slot["caller"].parent
        calls.append(
            CallFiles(name, caller=slot["caller"], agent=slot["agent"], **_sidecars(where, name))
        )
    return calls


def _sidecars(where: Path, name: str) -> dict[str, Path | None]:
    return {
        "transcript": _sidecar(where, name, "transcript", (".json",)),
        "scenario": _sidecar(where, name, "scenario", (".json", ".yaml", ".yml")),
    }


def check_audio(path: Path, channels: int, max_seconds: float) -> sf._SoundFileInfo:
    """The file's format, or ImportSourceError saying what is wrong with it."""
    try:
        info = sf.info(str(path))
    except (RuntimeError, sf.LibsndfileError) as exc:
        raise ImportSourceError(f"{path}: not a readable WAV/FLAC file ({exc})") from exc
    if info.format not in ("WAV", "WAVEX", "FLAC"):
        raise ImportSourceError(f"{path}: {info.format} audio; give WAV or FLAC")
    if info.channels != channels:
        want = "stereo (caller and agent)" if channels == 2 else "mono"
        raise ImportSourceError(f"{path}: {info.channels} channel(s); expected {want}")
    if not MIN_RATE <= info.samplerate <= MAX_RATE:
        raise ImportSourceError(
            f"{path}: {info.samplerate} Hz; supported rates are {MIN_RATE}-{MAX_RATE} Hz"
        )
    if info.frames <= 0:
        raise ImportSourceError(f"{path}: no audio frames")
    if info.frames / info.samplerate > max_seconds:
        raise ImportSourceError(
            f"{path}: {info.frames / info.samplerate:.0f} s long, more than {max_seconds:g} s"
        )
    return info


def read_transcript(path: Path) -> list[TranscriptLine]:
    """Parse a transcript sidecar; raise ImportSourceError naming the entry that is wrong."""
    try:
        doc: Any = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ImportSourceError(f"{path}: not valid JSON ({exc})") from exc
    items = doc.get("segments") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise ImportSourceError(f"{path}: expected a list of segments (or {{'segments': [...]}})")
    if len(items) > MAX_SEGMENTS:
        raise ImportSourceError(f"{path}: {len(items)} segments, more than {MAX_SEGMENTS}")
    lines = []
    for i, item in enumerate(items):
        where = f"{path}: segments[{i}]"
        if not isinstance(item, dict):
            raise ImportSourceError(f"{where}: must be an object")
        speaker = _SPEAKERS.get(str(item.get("speaker", "")).strip().lower())
        if speaker is None:
            raise ImportSourceError(f"{where}.speaker: must be user, caller or agent")
        text = item.get("text")
        if not isinstance(text, str) or len(text) > MAX_TEXT:
            raise ImportSourceError(f"{where}.text: must be a string of at most {MAX_TEXT} chars")
        start, end = (
            _time(item.get("start"), f"{where}.start"),
            _time(item.get("end"), f"{where}.end"),
        )
        if end < start:
            raise ImportSourceError(f"{where}: end ({end}) is before start ({start})")
        lines.append(TranscriptLine(speaker, text, start, end, _words(item.get("words"), where)))
    return lines


def _words(raw: Any, where: str) -> tuple[tuple[str, float, float], ...]:
    """A segment's optional ``words: [{word, start, end}]``, checked like the rest."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or len(raw) > MAX_WORDS:
        raise ImportSourceError(f"{where}.words: must be a list of at most {MAX_WORDS} words")
    out = []
    for j, w in enumerate(raw):
        at = f"{where}.words[{j}]"
        if not isinstance(w, dict) or not isinstance(w.get("word"), str):
            raise ImportSourceError(f"{at}: must be an object with a string 'word'")
        if len(w["word"]) > 200:
            raise ImportSourceError(f"{at}.word: longer than 200 characters")
        start, end = _time(w.get("start"), f"{at}.start"), _time(w.get("end"), f"{at}.end")
        if end < start:
            raise ImportSourceError(f"{at}: end ({end}) is before start ({start})")
        out.append((w["word"], start, end))
    return tuple(out)


def _time(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ImportSourceError(f"{where}: must be a finite number of seconds")
    if value < 0:
        raise ImportSourceError(f"{where}: must not be negative")
    return float(value)


ScenarioLoader = Callable[[Path], Any]


def load_json_scenario(path: Path) -> Any:
    if path.suffix.lower() != ".json":
        raise ImportSourceError(
            f"{path}: only JSON scenario files here (vae import calls reads YAML)"
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ImportSourceError(f"{path}: not valid JSON ({exc})") from exc


def call_scenario(
    files: CallFiles, shared: dict[str, Any] | None, load_scenario: ScenarioLoader
) -> tuple[dict[str, Any], str]:
    kind, source = "none", f"call {files.name}"
    doc: Any = {"domain": "imported", "description": f"imported call {files.name}"}
    if files.scenario is not None:
        doc, kind, source = load_scenario(files.scenario), "own", str(files.scenario)
    elif shared is not None:
        doc, kind = shared, "shared"
    if not isinstance(doc, dict):
        raise ImportSourceError(f"{source}: a scenario must be a mapping")
    try:
        scenario = scenario_from_dict({**doc, "name": files.name}, source)
    except ScenarioError as exc:
        raise ImportSourceError(str(exc)) from exc
    return scenario.to_dict(), kind


@dataclass
class CheckedCall:
    files: CallFiles
    scenario: dict[str, Any]
    kind: str
    lines: list[TranscriptLine]


def check_call(
    files: CallFiles,
    shared: dict[str, Any] | None,
    load_scenario: ScenarioLoader,
    max_seconds: float,
) -> CheckedCall:
    if files.stereo is not None:
        check_audio(files.stereo, 2, max_seconds)
    else:
        assert files.caller is not None and files.agent is not None
        check_audio(files.caller, 1, max_seconds)
        check_audio(files.agent, 1, max_seconds)
    lines = read_transcript(files.transcript) if files.transcript else []
    doc, kind = call_scenario(files, shared, load_scenario)
    return CheckedCall(files, doc, kind, lines)
