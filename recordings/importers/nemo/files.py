"""Tolerant readers for the files of an established-framework results directory.

Every reader returns ``(value, problem)``: a missing file is ``(None, "")``
(absence is normal for many files), a malformed one is ``(None, "why")`` so the
importer can report it per scenario and carry on. A symlink that loops,
dangles or leaves the run directory (:data:`RUN_ROOT`), and a special file
(a FIFO, a device such as ``/dev/zero``), is a listed problem and is never
followed or read: it could hang the import or read outside the source. Nothing here evaluates file
content as code: Python-repr contexts go through :func:`ast.literal_eval`,
which only builds literals.
"""

from __future__ import annotations

import ast
import contextvars
import json
import re
import stat
import struct
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

Problem = str

_TURN_LINE = re.compile(
    r"^\[\s*(?P<start>-?\d+(?:\.\d+)?)s\s*-\s*(?P<end>-?\d+(?:\.\d+)?)s\]\s*"
    r"\((?P<dur>-?\d+(?:\.\d+)?)s\)\s*(?P<role>USER|AGENT):\s?(?P<text>.*)$"
)
_LATENCY_LINE = re.compile(r"^\s+→\s*Response latency:\s*(?P<ms>-?\d+(?:\.\d+)?)ms")


#: The resolved run directory being imported; symlinks must stay inside it.
RUN_ROOT: contextvars.ContextVar[Path | None] = contextvars.ContextVar("RUN_ROOT", default=None)


def _label(path: Path) -> str:
    root = RUN_ROOT.get()
    if root is not None:
        try:
            return str(path.relative_to(root))
        except ValueError:
            pass
    return path.name


def usable(path: Path) -> tuple[bool, Problem]:
    """Whether ``path`` is a regular file we may read: ``(False, "")`` when simply absent."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return False, ""
    except OSError as exc:
        return False, f"{_label(path)}: cannot be examined ({exc.strerror or exc})"
    try:
        # Resolves every component: a symlinked parent directory is checked too.
        target = path.resolve(strict=True)
    except FileNotFoundError:
        return False, f"{_label(path)}: dangling symlink; not followed"
    except (RuntimeError, OSError):
        return False, f"{_label(path)}: symlink loop; not followed"
    root = RUN_ROOT.get()
    if root is not None and not target.is_relative_to(root):
        return False, f"{_label(path)}: symlink leaves the run directory; not followed"
    if stat.S_ISLNK(st.st_mode):
        try:
            st = target.stat()
        except OSError as exc:
            return False, f"{_label(path)}: cannot be examined ({exc.strerror or exc})"
    if stat.S_ISDIR(st.st_mode):
        return False, f"{_label(path)}: a directory where a file was expected; not read"
    if not stat.S_ISREG(st.st_mode):
        return False, f"{_label(path)}: not a regular file (special file); not read"
    return True, ""


def read_text(path: Path) -> tuple[str | None, Problem]:
    ok, problem = usable(path)
    if not ok:
        return None, problem
    try:
        return path.read_text(encoding="utf-8", errors="replace"), ""
    except OSError as exc:
        return None, f"{path.name}: unreadable ({exc})"


def read_json(path: Path) -> tuple[Any, Problem]:
    text, problem = read_text(path)
    if text is None:
        return None, problem
    try:
        return json.loads(text), ""
    except json.JSONDecodeError as exc:
        return None, f"{path.name}: malformed JSON ({exc.msg} at line {exc.lineno})"


def read_double_json(path: Path) -> tuple[Any, Problem]:
    """Tools files hold a JSON *string* that itself encodes the tools dict."""
    value, problem = read_json(path)
    if isinstance(value, str):
        try:
            return json.loads(value), ""
        except json.JSONDecodeError as exc:
            return None, f"{path.name}: inner JSON malformed ({exc.msg})"
    return value, problem


def parse_context(value: Any) -> tuple[Any, Problem]:
    """An LLM context as saved by the bot: a list, or a string holding JSON or a Python repr."""
    if not isinstance(value, str):
        return value, ""
    text = value.strip()
    if not text:
        return [], ""
    try:
        return json.loads(text), ""
    except json.JSONDecodeError:
        pass
    try:
        # literal_eval builds literals only (None/True/strings/lists/dicts): no code runs.
        return ast.literal_eval(text), ""
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        return None, f"context is neither JSON nor a Python literal ({type(exc).__name__})"


def read_context(path: Path) -> tuple[Any, Problem]:
    text, problem = read_text(path)
    if text is None:
        return None, problem
    if not text.strip():
        return [], ""
    try:
        value: Any = json.loads(text)
    except json.JSONDecodeError:
        value = text  # a bare Python repr written without JSON encoding
    parsed, why = parse_context(value)
    return parsed, (f"{path.parent.name}/{path.name}: {why}" if why else "")


def read_db_hashes(path: Path) -> tuple[dict[str, str] | None, Problem]:
    """``db_hash: <hex>`` and, for dual-sided domains, ``user_db_hash: <hex>``."""
    text, problem = read_text(path)
    if text is None:
        return None, problem
    hashes: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("db_hash", "user_db_hash") and value.strip():
            hashes[key.strip()] = value.strip()
    if not hashes:
        return None, f"{path.name}: no db_hash line"
    return hashes, ""


@dataclass(frozen=True)
class LogTurn:
    role: str
    start_s: float
    end_s: float
    text: str
    latency_ms: float | None = None


@dataclass
class ConversationLog:
    start_time: str | None = None
    stop_reason: str | None = None
    turns: list[LogTurn] | None = None


def parse_conversation_log(text: str) -> ConversationLog:
    """Turn lines, latency lines, the header's start time and the stop reason."""
    log = ConversationLog(turns=[])
    assert log.turns is not None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.lower().startswith("start time:"):
            log.start_time = stripped.split(":", 1)[1].strip()
        elif stripped.lower().startswith("stop reason:"):
            log.stop_reason = stripped.split(":", 1)[1].strip()
        elif m := _TURN_LINE.match(stripped):
            log.turns.append(
                LogTurn(m["role"].lower(), float(m["start"]), float(m["end"]), m["text"].strip())
            )
        elif (m := _LATENCY_LINE.match(line)) and log.turns:
            last = log.turns[-1]
            log.turns[-1] = LogTurn(last.role, last.start_s, last.end_s, last.text, float(m["ms"]))
    return log


def parse_time_ns(text: Any) -> int | None:
    """An ISO timestamp as unix ns; naive times (the framework's) are read as UTC."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1_000_000) * 1000


@dataclass(frozen=True)
class WavData:
    """Samples as int16, shape (frames, channels)."""

    samples: np.ndarray
    sample_rate: int
    declared_frames: int

    @property
    def frames(self) -> int:
        return int(self.samples.shape[0])

    @property
    def channels(self) -> int:
        return int(self.samples.shape[1])

    @property
    def truncated(self) -> bool:
        return self.frames < self.declared_frames


def read_wav(path: Path) -> tuple[WavData | None, Problem]:
    """Read a RIFF/WAVE file, keeping what is there when the data is cut short.

    A crashed run leaves a WAV whose header still declares every frame; strict
    readers refuse it. This reader parses the chunks itself and takes the data
    bytes actually present (whole frames only).
    """
    ok, problem = usable(path)
    if not ok:
        return None, problem
    try:
        blob = path.read_bytes()
    except OSError as exc:
        return None, f"{path.name}: unreadable ({exc})"
    if len(blob) < 12 or blob[:4] != b"RIFF" or blob[8:12] != b"WAVE":
        return None, f"{path.name}: not a RIFF/WAVE file"
    fmt: tuple[int, int, int, int] | None = None
    pos = 12
    while pos + 8 <= len(blob):
        chunk_id = blob[pos : pos + 4]
        (size,) = struct.unpack("<I", blob[pos + 4 : pos + 8])
        body = pos + 8
        if chunk_id == b"fmt " and body + 16 <= len(blob):
            tag, channels, rate, _, _, bits = struct.unpack("<HHIIHH", blob[body : body + 16])
            if tag == 0xFFFE and size >= 40 and body + 26 <= len(blob):
                (tag,) = struct.unpack("<H", blob[body + 24 : body + 26])
            fmt = (tag, channels, rate, bits)
        elif chunk_id == b"data":
            if fmt is None:
                return None, f"{path.name}: data chunk before fmt chunk"
            return _decode(blob[body : body + size], fmt, size, path.name)
        pos = body + size + (size & 1)
    return None, f"{path.name}: no data chunk"


def _decode(
    data: bytes, fmt: tuple[int, int, int, int], declared: int, name: str
) -> tuple[WavData | None, Problem]:
    tag, channels, rate, bits = fmt
    if channels < 1 or rate <= 0:
        return None, f"{name}: bad format ({channels} channels at {rate} Hz)"
    width = bits // 8
    frame = width * channels
    usable = len(data) - len(data) % frame
    raw = data[:usable]
    if tag == 1 and bits == 16:
        samples = np.frombuffer(raw, dtype="<i2")
    elif tag == 1 and bits == 32:
        samples = (np.frombuffer(raw, dtype="<i4") >> 16).astype(np.int16)
    elif tag == 3 and bits == 32:
        floats = np.frombuffer(raw, dtype="<f4")
        samples = np.clip(np.round(floats * 32767.0), -32768, 32767).astype(np.int16)
    else:
        return None, f"{name}: unsupported sample format (tag {tag}, {bits} bits)"
    return WavData(samples.reshape(-1, channels).copy(), rate, declared // frame), ""
