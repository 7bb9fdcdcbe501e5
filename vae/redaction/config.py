"""The redaction configuration: one JSON Schema, the dataclass it loads into, its checks.

Why the schema is the source of truth: ``vae schema redaction`` prints it, an
editor checks a file against it, and :func:`parse_config` walks the same
document to refuse a bad file with the path of the first wrong field — so the
documentation, the editor and vae never disagree. Without a configuration
every built-in type is redacted (:data:`~vae.redaction.entities.BUILT_IN`).

A file (YAML or JSON)::

    entities: [CREDIT_CARD, PHONE_NUMBER, EMAIL_ADDRESS]   # default: all built-in types
    custom:
      - type: MEMBER_ID
        pattern: 'M-?\\d{6}'
    audio: {mask: tone}
    names: {base_url: http://127.0.0.1:8000/v1, model: my-model}

The endpoint's API key is read from the environment variable ``names.api_key_env``
names (``VAE_REDACT_API_KEY`` by default) and never stored.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vae.redaction.entities import BUILT_IN, DESCRIPTIONS, TYPE_NAME


class RedactionConfigError(ValueError):
    """A configuration that cannot be used; the message names the field and the problem."""


class RedactionUnavailable(RuntimeError):
    """Redaction needs the ``redact`` extra (presidio-analyzer), which is not installed."""


SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://vae.dev/schemas/redaction.schema.json",
    "title": "vae redaction configuration",
    "description": "What vae redact, vae import calls --redact, vae run --redact and "
    "vae rescore --redact treat as personal data, and how audio is masked.",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "entities": {
            "description": "Built-in types to redact (default: all). "
            + "; ".join(f"{k}: {v}" for k, v in DESCRIPTIONS.items()),
            "type": "array",
            "items": {"enum": list(BUILT_IN)},
            "uniqueItems": True,
        },
        "custom": {
            "description": "Your own types, each a regular expression (Python syntax).",
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "pattern"],
                "properties": {
                    "type": {
                        "description": "The type's name; its placeholder is <TYPE>.",
                        "type": "string",
                        "pattern": TYPE_NAME.pattern,
                    },
                    "pattern": {"description": "A Python regular expression.", "type": "string"},
                    "ignore_case": {"type": "boolean", "default": False},
                    "spoken": {
                        "description": "Also match the text with spoken numbers, letters and "
                        "e-mail words written out (four one -> 41).",
                        "type": "boolean",
                        "default": True,
                    },
                },
            },
        },
        "spoken_forms": {
            "description": "Catch spoken forms in transcripts (four one one one, john at "
            "example dot com, the third of March nineteen eighty).",
            "type": "boolean",
            "default": True,
        },
        "phone_regions": {
            "description": "Regions whose phone numbers are recognised (ISO 3166 codes).",
            "type": "array",
            "items": {"type": "string", "pattern": "^[A-Z]{2}$"},
            "default": ["US", "GB", "DE", "FR", "IE", "ES", "IT", "NL", "CA", "AU", "IN"],
        },
        "min_score": {
            "description": "Findings scored below this by their recogniser are kept.",
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "default": 0.3,
        },
        "audio": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "mask": {"enum": ["tone", "silence"], "default": "tone"},
                "tone_hz": {"type": "number", "minimum": 100, "maximum": 4000, "default": 1000},
                "level_dbfs": {"type": "number", "minimum": -60, "maximum": 0, "default": -18},
                "pad_ms": {
                    "description": "Masked before and after each word span.",
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1000,
                    "default": 80,
                },
            },
        },
        "names": {
            "description": "An OpenAI-compatible endpoint that finds names and free-form "
            "addresses (optional).",
            "type": "object",
            "additionalProperties": False,
            "required": ["base_url", "model"],
            "properties": {
                "base_url": {"type": "string", "pattern": "^https?://"},
                "model": {"type": "string", "minLength": 1},
                "api_key_env": {"type": "string", "default": "VAE_REDACT_API_KEY"},
                "timeout_s": {"type": "number", "minimum": 1, "maximum": 600, "default": 30},
                "max_retries": {"type": "integer", "minimum": 0, "maximum": 10, "default": 2},
            },
        },
    },
}


@dataclass(frozen=True)
class CustomPattern:
    type: str
    pattern: str
    ignore_case: bool = False
    spoken: bool = True


@dataclass(frozen=True)
class AudioMask:
    mask: str = "tone"
    tone_hz: float = 1000.0
    level_dbfs: float = -18.0
    pad_ms: float = 80.0


@dataclass(frozen=True)
class NamesEndpoint:
    base_url: str
    model: str
    api_key_env: str = "VAE_REDACT_API_KEY"
    timeout_s: float = 30.0
    max_retries: int = 2


@dataclass(frozen=True)
class RedactionConfig:
    """What to redact and how; :meth:`to_dict` is what the store keeps (no key)."""

    entities: tuple[str, ...] = BUILT_IN
    custom: tuple[CustomPattern, ...] = ()
    spoken_forms: bool = True
    phone_regions: tuple[str, ...] = tuple(SCHEMA["properties"]["phone_regions"]["default"])
    min_score: float = 0.3
    audio: AudioMask = field(default_factory=AudioMask)
    names: NamesEndpoint | None = None

    @property
    def types(self) -> tuple[str, ...]:
        """Every type this configuration redacts: built-in ones, then custom ones."""
        return (*self.entities, *(c.type for c in self.custom))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["entities"] = list(self.entities)
        data["custom"] = [asdict(c) for c in self.custom]
        data["phone_regions"] = list(self.phone_regions)
        return data

    def fingerprint(self) -> str:
        """A short hash of what is redacted (a second pass with the same one changes nothing)."""
        text = json.dumps(self.to_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _check(value: Any, schema: dict[str, Any], where: str) -> None:
    """Raise RedactionConfigError when ``value`` breaks ``schema`` (the subset SCHEMA uses)."""
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(str(c) for c in schema["enum"])
        raise RedactionConfigError(f"{where}: unknown value {value!r} (choose from {choices})")
    kind = schema.get("type")
    checks = {
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "boolean": lambda v: isinstance(v, bool),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: (
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        ),
    }
    if kind is not None and not checks[kind](value):
        raise RedactionConfigError(f"{where}: must be {'an' if kind[0] in 'aio' else 'a'} {kind}")
    if kind == "object":
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                raise RedactionConfigError(f"{where}.{name}: required")
        for name, item in value.items():
            if name not in props:
                known = ", ".join(props)
                raise RedactionConfigError(f"{where}.{name}: unknown field (known: {known})")
            _check(item, props[name], f"{where}.{name}")
    elif kind == "array":
        if schema.get("uniqueItems") and len({json.dumps(v) for v in value}) != len(value):
            raise RedactionConfigError(f"{where}: lists an item twice")
        for i, item in enumerate(value):
            _check(item, schema.get("items", {}), f"{where}[{i}]")
    elif kind == "string":
        if len(value) < schema.get("minLength", 0):
            raise RedactionConfigError(f"{where}: must not be empty")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            raise RedactionConfigError(f"{where}: {value!r} does not match {schema['pattern']}")
    elif kind in ("number", "integer"):
        low, high = schema.get("minimum"), schema.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            raise RedactionConfigError(f"{where}: {value} is outside {low}..{high}")


def parse_config(doc: Any, source: str = "redaction config") -> RedactionConfig:
    """A checked :class:`RedactionConfig` from a parsed document (None or {}: the defaults)."""
    if doc is None:
        doc = {}
    _check(doc, SCHEMA, source)
    custom = []
    seen: set[str] = set(doc.get("entities", BUILT_IN))
    for i, item in enumerate(doc.get("custom", [])):
        where = f"{source}.custom[{i}]"
        if item["type"] in BUILT_IN or item["type"] in seen:
            raise RedactionConfigError(f"{where}.type: {item['type']} is already a type")
        seen.add(item["type"])
        flags = re.IGNORECASE if item.get("ignore_case") else 0
        try:
            compiled = re.compile(item["pattern"], flags)
        except re.error as exc:
            raise RedactionConfigError(f"{where}.pattern: not a valid expression ({exc})") from exc
        if compiled.search("") is not None:
            raise RedactionConfigError(f"{where}.pattern: matches the empty string")
        custom.append(CustomPattern(**item))
    names = doc.get("names")
    return RedactionConfig(
        entities=tuple(doc.get("entities", BUILT_IN)),
        custom=tuple(custom),
        spoken_forms=doc.get("spoken_forms", True),
        phone_regions=tuple(doc.get("phone_regions", RedactionConfig.phone_regions)),
        min_score=float(doc.get("min_score", 0.3)),
        audio=AudioMask(**{k: v for k, v in (doc.get("audio") or {}).items()}),
        names=NamesEndpoint(**names) if names else None,
    )


def config_from_dict(data: dict[str, Any]) -> RedactionConfig:
    """A configuration as :meth:`RedactionConfig.to_dict` stored it."""
    doc = {k: v for k, v in data.items() if v is not None}
    return parse_config(doc, "stored redaction config")


def load_config(path: str | Path | None) -> RedactionConfig:
    """Read and check a configuration file (YAML or JSON); None: the defaults."""
    if path is None:
        return RedactionConfig()
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RedactionConfigError(f"{p}: cannot read ({exc})") from exc
    try:
        if p.suffix.lower() == ".json":
            doc = json.loads(text)
        else:
            import yaml

            doc = yaml.safe_load(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise RedactionConfigError(f"{p}: not valid JSON ({exc})") from exc
    except Exception as exc:  # yaml.YAMLError, without importing yaml at module level
        raise RedactionConfigError(f"{p}: not valid YAML ({exc})") from exc
    return parse_config(doc, str(p))


def schema_text() -> str:
    return json.dumps(SCHEMA, indent=2) + "\n"
