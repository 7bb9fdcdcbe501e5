"""The JSON Schema of scenario files, generated from the scenario model.

Why generated: a schema kept by hand beside the dataclasses drifts the day a
field is added. Here every property comes from a dataclass field of
:mod:`vae.recordings.scenarios.model` (and, where that model keeps plain data, of
:mod:`vae.recordings.scenarios.parts`): its type from the annotation, its default
from the field, its description from :mod:`vae.recordings.scenarios.docs`. The
same schema drives :mod:`vae.recordings.scenarios.check` (``vae validate`` and the
bridge's ``StartRun``), is printed by ``vae schema scenario``, and is shipped
as ``recordings/scenarios/scenario.schema.json`` for editors (a test holds the
file equal to the generated one).

Rules beyond the annotations: a ``list[str]`` also accepts one string; in the
main model, an empty (``null``) string, list or mapping field means its
default; a side section holds the reference bots' keys inline.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union

from vae.recordings.scenarios import caller, line, model, parts, tools
from vae.recordings.scenarios.docs import CLASS_DOCS, FIELD_DOCS

SCHEMA_FILE = Path(__file__).with_name("scenario.schema.json")
DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: Where the model stores plain data, the shape it must have.
REFINED: dict[str, Any] = {
    "Scenario.db_state_assertions": list[parts.DbStateAssertion],
    "Scenario.initialization_actions": list[parts.InitializationAction],
    "Scenario.tool_call_expectations": list[tools.ToolCallExpectation],
    "Resources.tools": dict[str, dict[str, str] | None],
}
#: Extra keywords for one field.
CONSTRAINTS: dict[str, dict[str, Any]] = {
    "Scenario.name": {"minLength": 1, "pattern": r"\S"},
    "Scenario.max_duration": {"exclusiveMinimum": 0},
    "Scenario.sync_hook": {"pattern": r"^[^:]+:[^:]+$"},
    "ScriptItem.dtmf": {"pattern": r"^[0-9*#A-D]{1,64}$"},
}
#: Spellings accepted besides the fields (the established framework's flat names).
ALIASES: dict[str, dict[str, Any]] = {
    "Scenario": {
        **{
            f"{side}_{part}": (getattr(model, part.capitalize()), f"{side}.{part}")
            for side in ("user", "agent")
            for part in ("persona", "task", "actions", "resources")
        },
        "noise_config": (model.NoiseConfig | None, "noise"),
        "db": (dict[str, Any], "initial_state"),
        "user_db": (dict[str, Any], "initial_user_state"),
    },
    "NoiseConfig": {"random_white_noise": (bool, "white_noise_db: -20")},
}
#: Annotation of an open mapping whose unknown keys are refused only when they look
#: like a misspelt known key (the validator reads it; JSON Schema ignores it).
TYPO_CHECK = "x-vae-refuse-misspelt-keys"
#: Side-section keys besides the SideSpec fields, by the dataclass describing them.
SIDE_INLINE = (
    parts.ReferenceBotConfig,
    tools.ToolBackendKeys,
    parts.ImportedSideKeys,
    caller.CallerKeys,
    line.LineKeys,
)


def _is_dataclass_type(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


class _Builder:
    def __init__(self) -> None:
        self.defs: dict[str, dict[str, Any]] = {}

    def type_schema(self, tp: Any, nullable_empty: bool = False) -> dict[str, Any]:
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if tp is Any:
            return {}
        if tp is type(None):
            return {"type": "null"}
        simple = {str: "string", bool: "boolean", int: "integer", float: "number"}
        if tp in simple:
            return {"type": simple[tp]}
        if origin in (Union, types.UnionType):
            subs = [self.type_schema(a) for a in args]
            if all(set(s) == {"type"} and isinstance(s["type"], str) for s in subs):
                return {"type": [s["type"] for s in subs]}
            return {"anyOf": subs}
        if origin is Literal:
            return {"enum": list(args)}
        if origin is list:
            item = self.type_schema(args[0])
            if item == {"type": "string"}:
                return {"type": ["array", "string"], "items": item}
            return {"type": "array", "items": item}
        if origin is dict:
            value = self.type_schema(args[1])
            return {"type": "object", **({"additionalProperties": value} if value else {})}
        if tp is model.SuccessSignal:
            names = [s.value for s in model.SuccessSignal]
            return {"enum": names + [n.lower() for n in names] + list(model.SIGNAL_ALIASES)}
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return {"enum": [m.value for m in tp]}
        if _is_dataclass_type(tp):
            self.define(tp)
            return {"$ref": f"#/$defs/{tp.__name__}"}
        raise TypeError(f"no JSON Schema for {tp!r}")

    def field_schema(self, cls: type, f: dataclasses.Field[Any], hint: Any) -> dict[str, Any]:
        key = f"{cls.__name__}.{f.name}"
        tp = REFINED.get(key, hint)
        out = self.type_schema(tp)
        if cls.__module__ == model.__name__ and "type" in out and f.default is not None:
            kinds = out["type"] if isinstance(out["type"], list) else [out["type"]]
            if {"string", "array", "object"} & set(kinds) and "null" not in kinds:
                out["type"] = [*kinds, "null"]
        if cls.__module__ == model.__name__ and set(out) == {"$ref"}:
            out = {"anyOf": [out, {"type": "null"}]}
        out.update(CONSTRAINTS.get(key, {}))
        out.update({k: v for k, v in f.metadata.items() if k != "doc"})
        if key in FIELD_DOCS:
            out["description"] = FIELD_DOCS[key]
        default = _default(f)
        if default is not dataclasses.MISSING:
            out["default"] = default
        return out

    def define(self, cls: type) -> None:
        if cls.__name__ in self.defs:
            return
        self.defs[cls.__name__] = {}  # reserve: recursive references
        hints = typing.get_type_hints(cls)
        props: dict[str, Any] = {}
        required: list[str] = []
        for f in dataclasses.fields(cls):
            if cls is model.SideSpec and f.name == "extras":
                props["extras"] = {
                    "type": ["object", "null"],
                    "description": FIELD_DOCS["SideSpec.extras"],
                }
                for inline in SIDE_INLINE:
                    for g in dataclasses.fields(inline):
                        props[g.name] = self.field_schema(
                            inline, g, typing.get_type_hints(inline)[g.name]
                        )
                continue
            props[f.name] = self.field_schema(cls, f, hints[f.name])
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                required.append(f.name)
        for alias, (tp, target) in ALIASES.get(cls.__name__, {}).items():
            props[alias] = {**self.type_schema(tp), "description": f"Alias of `{target}`."}
        schema: dict[str, Any] = {"type": "object"}
        if cls.__name__ in CLASS_DOCS:
            schema["description"] = CLASS_DOCS[cls.__name__]
        schema["properties"] = props
        if required:
            schema["required"] = required
        if cls is model.SideSpec:
            # Other keys go to the side's own bot as they are (a Node bot reads its
            # own key); a key that looks like a misspelt known one is refused.
            schema["additionalProperties"] = True
            schema[TYPO_CHECK] = True
        else:
            schema["additionalProperties"] = False
        one_of = getattr(cls, "SCHEMA_ONE_OF", ())
        if one_of:
            schema["anyOf"] = [{"required": list(keys)} for keys in one_of]
        self.defs[cls.__name__] = schema


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return dataclasses.MISSING
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.MISSING  # a nested section: its own fields say their defaults
    value = (
        [str(v) if isinstance(v, enum.Enum) else v for v in value]
        if isinstance(value, list)
        else value
    )
    try:
        json.dumps(value)
    except TypeError:
        return dataclasses.MISSING
    return value


def scenario_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file: one scenario or a list of them."""
    builder = _Builder()
    builder.define(model.Scenario)
    return {
        "$schema": DIALECT,
        "$id": "urn:vae:schema:scenario",
        "title": "vae scenario file",
        "description": "One scenario, or a list of scenarios (docs/scenarios.md).",
        "anyOf": [
            {"$ref": "#/$defs/Scenario"},
            {"type": "array", "items": {"$ref": "#/$defs/Scenario"}},
        ],
        "$defs": dict(sorted(builder.defs.items())),
    }


def schema_text() -> str:
    """The schema as the shipped file holds it (stable key order, trailing newline)."""
    return json.dumps(scenario_schema(), indent=2, ensure_ascii=False) + "\n"
