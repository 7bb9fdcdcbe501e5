"""Phone-line conditions: what the caller's audio goes through before the agent hears it.

Why its own module: a scenario states them under ``user.line``, a run may
override them field by field (``vae run --line``, ``RunOptions.line``), the
bridge applies them (``bridge_service/audio/line.py``) and the store records the
effective line per session. All of those need one definition of the fields,
their ranges and how an override combines with a scenario's line; the
schema (:mod:`vae.recordings.scenarios.schema`) reads the dataclass below like the
rest of the model, so ``vae validate`` refuses a value out of range with its
position.

The fields (docs/scenarios.md, "The line"):

- ``codec``: ``pcm`` (clean) or ``mulaw8k`` (band-limited to 8 kHz sampling,
  mu-law companded, back to the agent's rate);
- ``packet_loss`` (0..1) of 20 ms packets, with ``packet_loss_burst`` the mean
  length of a loss burst in packets (unset: independent losses);
- ``jitter_ms``: packet delay variation; a packet later than the far end's
  fixed 40 ms playout buffer is played as a gap;
- ``gain_db`` and ``clipping`` (the level in dBFS where the caller's audio is
  hard-clipped);
- ``white_noise_db``: white noise at this level, on top of (or instead of the
  white noise of) the scenario's ``noise``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

Codec = Literal["pcm", "mulaw8k"]
CODECS = ("pcm", "mulaw8k")
#: Length of one network packet, ms (what loss and jitter apply to).
PACKET_MS = 20
#: The far end's playout buffer, ms: a packet delayed more than this is a gap.
PLAYOUT_MS = 40

#: Field -> (minimum, maximum) for the numbers.
RANGES: dict[str, tuple[float, float]] = {
    "packet_loss": (0.0, 1.0),
    "packet_loss_burst": (1.0, 100.0),
    "jitter_ms": (0.0, 500.0),
    "gain_db": (-60.0, 40.0),
    "clipping": (-60.0, 0.0),
    "white_noise_db": (-100.0, 0.0),
}


def _rng(name: str) -> dict[str, float]:
    low, high = RANGES[name]
    return {"minimum": low, "maximum": high}


@dataclass
class LineConditions:
    """The phone line between the caller and the agent (user -> agent direction)."""

    codec: Codec = "pcm"
    packet_loss: float = field(default=0.0, metadata=_rng("packet_loss"))
    packet_loss_burst: float | None = field(default=None, metadata=_rng("packet_loss_burst"))
    jitter_ms: float = field(default=0.0, metadata=_rng("jitter_ms"))
    gain_db: float = field(default=0.0, metadata=_rng("gain_db"))
    clipping: float | None = field(default=None, metadata=_rng("clipping"))
    white_noise_db: float | None = field(default=None, metadata=_rng("white_noise_db"))

    @property
    def clean(self) -> bool:
        """Nothing to do: the line passes audio through unchanged."""
        return self == LineConditions()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class LineKeys:
    """The side-section key of the line (only the caller's side has one)."""

    line: LineConditions | None = None


FIELDS = tuple(f.name for f in fields(LineConditions))


def problem(name: str, value: Any) -> str:
    """Why ``value`` is not a valid ``name`` of a line ("" when it is)."""
    if name not in FIELDS:
        return f"unknown field (one of: {', '.join(FIELDS)})"
    if name == "codec":
        return "" if value in CODECS else f"{value!r} is not one of: {', '.join(CODECS)}"
    if value is None and name in ("packet_loss_burst", "clipping", "white_noise_db"):
        return ""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return "must be a number"
    low, high = RANGES[name]
    if not low <= value <= high:
        return f"must be {low:g}..{high:g}, got {value:g}"
    return ""


def burst_problem(line: LineConditions) -> str:
    """Whether a loss rate can have the mean burst asked (a two-state loss model)."""
    p, burst = line.packet_loss, line.packet_loss_burst
    if burst is None or p in (0.0, 1.0):
        return ""
    if p / (1 - p) > burst:
        return (
            f"a mean burst of {burst:g} packets cannot give a loss rate of {p:g} "
            f"(needs at least {p / (1 - p):.3g})"
        )
    return ""


def line_from_dict(data: Any) -> LineConditions:
    """Plain data (a scenario's ``user.line``, a recorded line) into the dataclass.

    Raises ``ValueError("FIELD: problem")`` on the first bad field.
    """
    if data is None:
        return LineConditions()
    if not isinstance(data, dict):
        raise ValueError(f"line: must be a mapping, got {type(data).__name__}")
    values: dict[str, Any] = {}
    for name, value in data.items():
        why = problem(str(name), value)
        if why:
            raise ValueError(f"{name}: {why}")
        values[str(name)] = value if name == "codec" or value is None else float(value)
    line = LineConditions(**values)
    if why := burst_problem(line):
        raise ValueError(f"packet_loss_burst: {why}")
    return line


def merge(base: LineConditions, overrides: dict[str, Any]) -> LineConditions:
    """``base`` with the fields a run set (``vae run --line``) replaced."""
    merged = {**base.to_dict(), **overrides}
    return line_from_dict(merged)


def parse_option(text: str) -> dict[str, Any]:
    """``--line codec=mulaw8k,packet_loss=0.1`` into field -> value (ValueError naming it)."""
    out: dict[str, Any] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, raw = part.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep or not raw:
            raise ValueError(f"{part!r}: expected FIELD=VALUE (fields: {', '.join(FIELDS)})")
        if name == "codec":
            value: Any = raw
        elif raw.lower() in ("none", "null", "off"):
            value = None
        else:
            try:
                value = float(raw)
            except ValueError:
                raise ValueError(f"{name}: {raw!r} is not a number") from None
        if why := problem(name, value):
            raise ValueError(f"{name}: {why}")
        out[name] = value
    return out


def describe(line: dict[str, Any] | None) -> str:
    """A short human form for tables: ``mulaw8k loss 10% (burst 3) jitter 20ms``."""
    if not line:
        return "clean"
    bits = [] if line.get("codec", "pcm") == "pcm" else [str(line["codec"])]
    if line.get("packet_loss"):
        burst = line.get("packet_loss_burst")
        bits.append(
            f"loss {line['packet_loss'] * 100:g}%" + (f" (burst {burst:g})" if burst else "")
        )
    if line.get("jitter_ms"):
        bits.append(f"jitter {line['jitter_ms']:g}ms")
    if line.get("gain_db"):
        bits.append(f"gain {line['gain_db']:+g}dB")
    if line.get("clipping") is not None:
        bits.append(f"clip {line['clipping']:g}dBFS")
    if line.get("white_noise_db") is not None:
        bits.append(f"noise {line['white_noise_db']:g}dBFS")
    return " ".join(bits) or "clean"


def describe_recorded(line: Any) -> str:
    """A session's recorded line (``sessions.line_json``) in a few words, with its losses."""
    if not isinstance(line, dict):
        return "clean"
    if line.get("not_applicable"):
        return f"{describe(line)} (not applied: text)"
    lost = int(line.get("lost", 0) or 0) + int(line.get("late", 0) or 0)
    packets = int(line.get("packets", 0) or 0)
    tail = f", {lost}/{packets} packets lost" if packets and lost else ""
    return describe(line) + tail
