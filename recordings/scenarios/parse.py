"""Plain data (a parsed file, a frozen run's JSON) into a :class:`Scenario`.

Why apart from the model: the model (:mod:`vae.recordings.scenarios.model`) changes when
a field is added, and the schema follows it by generation; this module changes
when what is *accepted* changes: the established framework's flat spellings
and aliases (``user_persona``, ``db``, ``noise_config``, ``env_type``...),
defaults for empty values, and the rules the schema cannot state (identifier
names, trial suffixes, tags). The schema check (:mod:`vae.recordings.scenarios.check`)
runs first, so every problem it finds is reported at once; every error names
the source, the field and the problem.
"""

from __future__ import annotations

from typing import Any

from vae.recordings import identifiers
from vae.recordings.errors import ScenarioError
from vae.recordings.scenarios.caller import voicemail_assertions
from vae.recordings.scenarios.check import check
from vae.recordings.scenarios.expect import EXPECT_FAIL_TAG, EXPECT_PASS_TAG
from vae.recordings.scenarios.model import (
    DEFAULT_SUCCESS_SIGNALS,
    SIGNAL_ALIASES,
    Actions,
    NoiseConfig,
    Persona,
    Resources,
    Scenario,
    SideSpec,
    SuccessSignal,
    Task,
)
from vae.recordings.trials import split_trial

_TOP_LEVEL = {f for f in Scenario.__dataclass_fields__} | {
    # established flat spellings, folded into the side sections
    "user_persona", "user_task", "user_actions", "user_resources",
    "agent_persona", "agent_task", "agent_actions", "agent_resources",
    "noise_config", "db", "user_db",
}  # fmt: skip


def scenario_from_dict(data: Any, source: str = "<scenario>") -> Scenario:
    """Validate a plain-data scenario; raise :class:`ScenarioError` naming the field.

    Every problem the schema check finds is in the error (``problems``); the
    first is its ``field``/``problem``.
    """
    issues = check(data)
    if issues:
        listed = [f"{source}: {i.field}: {i.problem}" for i in issues]
        raise ScenarioError(source, issues[0].field, issues[0].problem, listed)
    if not isinstance(data, dict):
        raise ScenarioError(source, "<document>", f"expected a mapping, got {type(data).__name__}")
    unknown = sorted(set(data) - _TOP_LEVEL)
    if unknown:
        raise ScenarioError(source, unknown[0], "unknown field")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ScenarioError(source, "name", "required, a non-empty string")
    # A trial of a repeated run is frozen as "<name>#<k>" (vae.recordings.trials).
    why = identifiers.problem(split_trial(name.strip())[0])
    if why:
        raise ScenarioError(source, "name", f"{name.strip()[:40]!r} {why}")
    where = f"{source} [{name}]"
    sc = Scenario(name=name.strip())
    sc.domain = _str(data, "domain", where, "default") or "default"
    sc.description = _str(data, "description", where, "")
    max_duration = data.get("max_duration", 300.0)
    if isinstance(max_duration, bool) or not isinstance(max_duration, int | float):
        raise ScenarioError(where, "max_duration", "must be a number of seconds")
    if max_duration <= 0:
        raise ScenarioError(where, "max_duration", "must be positive")
    sc.max_duration = float(max_duration)
    for role in ("user", "agent"):
        section = dict(_mapping(data, role, where))
        for part in ("persona", "task", "actions", "resources"):
            flat = f"{role}_{part}"
            if flat in data:
                section[part] = data[flat]
        setattr(sc, role, _side(section, f"{where} {role}"))
    sc.initial_state = dict(_mapping(data, "initial_state", where) or _mapping(data, "db", where))
    sc.initial_user_state = dict(
        _mapping(data, "initial_user_state", where) or _mapping(data, "user_db", where)
    )
    ref = data.get("reference_answer")
    if ref is not None and not isinstance(ref, dict | list):
        raise ScenarioError(where, "reference_answer", "must be a mapping or a list")
    sc.reference_answer = ref
    for flag in ("ignore_capitalization", "ignore_punctuation", "clean_text",
                 "disallow_extra_items"):  # fmt: skip
        value = data.get(flag, False)
        if not isinstance(value, bool):
            raise ScenarioError(where, flag, "must be true or false")
        setattr(sc, flag, value)
    for db_field in ("expected_scenario_db", "expected_user_db"):
        value = data.get(db_field)
        if value is not None and not isinstance(value, dict):
            raise ScenarioError(where, db_field, "must be a mapping")
        setattr(sc, db_field, value)
    sc.order_independent_lists = _str_list(data, "order_independent_lists", where)
    sc.nl_assertions = _str_list(data, "nl_assertions", where)
    sc.db_state_assertions = _assertions(data.get("db_state_assertions"), where)
    # A voicemail's `expect` stands for assertions on its DB (kept once through a re-parse).
    implied = voicemail_assertions({**sc.user.extras})
    sc.db_state_assertions += [a for a in implied if a not in sc.db_state_assertions]
    sc.initialization_actions = _init_actions(data.get("initialization_actions"), where)
    sc.success_signals = _signals(data.get("success_signals"), where)
    noise = data.get("noise", data.get("noise_config"))
    sc.noise = None if noise is None else _noise(noise, where)
    hook = data.get("sync_hook")
    if hook is not None and (not isinstance(hook, str) or ":" not in hook):
        raise ScenarioError(where, "sync_hook", "must be 'module:function'")
    sc.sync_hook = hook
    sc.tags = _str_list(data, "tags", where)
    for i, tag in enumerate(sc.tags):
        if why := identifiers.problem(tag):
            raise ScenarioError(where, f"tags[{i}]", f"{tag[:40]!r} {why}")
    sc.expect_fail = _expect_fail(data, sc.tags, where)
    first = data.get("first_speaker")
    if first is not None and first not in ("agent", "user"):
        raise ScenarioError(where, "first_speaker", "must be 'agent' or 'user'")
    sc.first_speaker = first
    backend = data.get("tool_backend", False)
    if not isinstance(backend, bool):
        raise ScenarioError(where, "tool_backend", "must be true or false")
    sc.tool_backend = backend
    sc.tool_call_expectations = _expectations(data.get("tool_call_expectations"), where)
    return sc


# ---------------------------------------------------------------- helpers
def _expect_fail(data: dict[str, Any], tags: list[str], where: str) -> bool:
    """The field, set by the ``expect-fail`` tag too (a ``Scenario`` built in Python with the
    tag arrives here as ``expect_fail: false`` plus the tag: the tag wins); a scenario that
    also says ``expect-pass`` contradicts itself and is refused, never guessed."""
    given = data.get("expect_fail")
    if given is not None and not isinstance(given, bool):
        raise ScenarioError(where, "expect_fail", "must be true or false")
    tagged = EXPECT_FAIL_TAG in tags
    if (given or tagged) and EXPECT_PASS_TAG in tags:
        why = "expect_fail: true" if given else f"the tag {EXPECT_FAIL_TAG!r}"
        raise ScenarioError(where, "tags", f"{EXPECT_PASS_TAG!r} contradicts {why}")
    return bool(given) or tagged


def _str(data: dict[str, Any], key: str, where: str, default: str) -> str:
    value = data.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ScenarioError(where, key, f"must be a string, got {type(value).__name__}")
    return value


def _mapping(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ScenarioError(where, key, f"must be a mapping, got {type(value).__name__}")
    return value


def _str_list(data: dict[str, Any], key: str, where: str) -> list[str]:
    value = data.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ScenarioError(where, key, "must be a list of strings")
    return list(value)


def _side(section: dict[str, Any], where: str) -> SideSpec:
    spec = SideSpec()
    persona = _mapping(section, "persona", where)
    task = _mapping(section, "task", where)
    actions = _mapping(section, "actions", where)
    resources = _mapping(section, "resources", where)
    for key in persona:
        if key not in Persona.__dataclass_fields__:
            raise ScenarioError(where, f"persona.{key}", "unknown field")
    spec.persona = Persona(**{k: str(v) for k, v in persona.items() if v is not None})
    for key in task:
        if key not in Task.__dataclass_fields__:
            raise ScenarioError(where, f"task.{key}", "unknown field")
    spec.task = Task(**{k: str(v) for k, v in task.items() if v is not None})
    spec.actions = Actions(
        instructions=_str_list(actions, "instructions", f"{where} actions"),
        guidelines=_str_list(actions, "guidelines", f"{where} actions"),
    )
    tools = _mapping(resources, "tools", f"{where} resources")
    for tool, args in tools.items():
        if args is not None and not isinstance(args, dict):
            raise ScenarioError(where, f"resources.tools.{tool}", "must map argument names")
    spec.resources = Resources(
        tools={t: {str(k): str(v) for k, v in (a or {}).items()} for t, a in tools.items()},
        documents={str(k): str(v) for k, v in _mapping(resources, "documents", where).items()},
        information=_str_list(resources, "information", f"{where} resources"),
    )
    known = ("persona", "task", "actions", "resources", "extras")
    # A frozen scenario (to_dict) keeps extras under "extras"; a file puts them inline.
    spec.extras = dict(_mapping(section, "extras", where))
    spec.extras.update({k: v for k, v in section.items() if k not in known})
    return spec


def _assertions(value: Any, where: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ScenarioError(where, "db_state_assertions", "must be a list")
    out = []
    for i, item in enumerate(value):
        field_name = f"db_state_assertions[{i}]"
        if not isinstance(item, dict):
            raise ScenarioError(where, field_name, "must be a mapping")
        if "func_name" not in item and not ("path" in item and "op" in item):
            raise ScenarioError(where, field_name, "needs 'path' and 'op', or 'func_name'")
        side = item.get("side", "agent")
        if side not in ("agent", "user"):
            raise ScenarioError(where, f"{field_name}.side", "must be 'agent' or 'user'")
        out.append(dict(item, side=side))
    return out


def _init_actions(value: Any, where: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ScenarioError(where, "initialization_actions", "must be a list")
    out = []
    for i, item in enumerate(value):
        field_name = f"initialization_actions[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("func_name"), str):
            raise ScenarioError(where, field_name, "must be a mapping with 'func_name'")
        side = item.get("side", item.get("env_type", "agent"))
        if side == "assistant":
            side = "agent"
        if side not in ("agent", "user"):
            raise ScenarioError(where, f"{field_name}.side", "must be 'agent' or 'user'")
        args = item.get("arguments", {})
        if not isinstance(args, dict):
            raise ScenarioError(where, f"{field_name}.arguments", "must be a mapping")
        out.append({"side": side, "func_name": item["func_name"], "arguments": args})
    return out


def _expectations(value: Any, where: str) -> list[dict[str, Any]]:
    """The items as written (the schema check ran), with ``tool`` required and kept first."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ScenarioError(where, "tool_call_expectations", "must be a list")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("tool"), str):
            raise ScenarioError(where, f"tool_call_expectations[{i}]", "needs a 'tool'")
        out.append({k: v for k, v in item.items() if v is not None})
    return out


def _signals(value: Any, where: str) -> list[SuccessSignal]:
    if value is None:
        return list(DEFAULT_SUCCESS_SIGNALS)
    if not isinstance(value, list):
        raise ScenarioError(where, "success_signals", "must be a list")
    out = []
    for item in value:
        key = str(item)
        if key in SIGNAL_ALIASES:
            out.append(SIGNAL_ALIASES[key])
        elif key.upper() in SuccessSignal.__members__:
            out.append(SuccessSignal(key.upper()))
        else:
            choices = ", ".join(s.value for s in SuccessSignal)
            raise ScenarioError(where, "success_signals", f"unknown signal {key!r} ({choices})")
    return out


def _noise(value: Any, where: str) -> NoiseConfig:
    if not isinstance(value, dict):
        raise ScenarioError(where, "noise", "must be a mapping")
    white = value.get("white_noise_db")
    if white is None and value.get("random_white_noise"):
        white = -20.0
    if white is not None and (isinstance(white, bool) or not isinstance(white, int | float)):
        raise ScenarioError(where, "noise.white_noise_db", "must be a number (dBFS)")
    gain = value.get("gain_db", 0.0)
    if isinstance(gain, bool) or not isinstance(gain, int | float):
        raise ScenarioError(where, "noise.gain_db", "must be a number")
    return NoiseConfig(
        white_noise_db=None if white is None else float(white),
        noise_files=_str_list(value, "noise_files", f"{where} noise"),
        gain_db=float(gain),
        random_offset=bool(value.get("random_offset", True)),
    )
