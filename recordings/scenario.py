"""Scenarios: the validated document a run is made of, frozen into the store.

The fields follow the established Scenario class (persona, task, actions and
resources per side; reference answer and matching flags; expected DBs; NL and
DB-state assertions; initialization actions; success signals; noise; a sync
hook). Parsing files (YAML/JSON/Python modules) belongs to the bridge; this
module only validates plain data, so the store and the scorer read the same
model without a YAML parser. Every error names the source, the field and the
problem.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any

from recordings import identifiers
from recordings.errors import ScenarioError
from recordings.trials import split_trial


class SuccessSignal(enum.StrEnum):
    ACTION_MATCH = "ACTION_MATCH"
    DB_STATE_MATCH = "DB_STATE_MATCH"
    DB_STATE_ASSERTION = "DB_STATE_ASSERTION"
    NL_ASSERTION = "NL_ASSERTION"
    JUDGE_PASSED = "JUDGE_PASSED"
    CLEAN_EXIT = "CLEAN_EXIT"


#: The established framework's stored values, accepted as aliases.
SIGNAL_ALIASES = {
    "is_action_match": SuccessSignal.ACTION_MATCH,
    "db_state_match": SuccessSignal.DB_STATE_MATCH,
    "db_state_assertion": SuccessSignal.DB_STATE_ASSERTION,
    "nl_assertion": SuccessSignal.NL_ASSERTION,
    "judge_passed": SuccessSignal.JUDGE_PASSED,
    "clean_exit": SuccessSignal.CLEAN_EXIT,
}


@dataclass
class Persona:
    role: str = ""
    name: str = ""
    background: str = ""
    personality: str = ""
    language: str = ""
    accent: str = ""


@dataclass
class Task:
    goal: str = ""
    background: str = ""


@dataclass
class Actions:
    instructions: list[str] = field(default_factory=list)
    guidelines: list[str] = field(default_factory=list)


@dataclass
class Resources:
    #: ``{"tool_name": {"arg": "description"}}`` as in the established framework.
    tools: dict[str, dict[str, str]] = field(default_factory=dict)
    documents: dict[str, str] = field(default_factory=dict)
    information: list[str] = field(default_factory=list)


@dataclass
class SideSpec:
    persona: Persona = field(default_factory=Persona)
    task: Task = field(default_factory=Task)
    actions: Actions = field(default_factory=Actions)
    resources: Resources = field(default_factory=Resources)
    #: Anything else under the side (e.g. ``script`` for scripted reference bots);
    #: sent to that side's bot as SessionStart.side_config_json.
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass
class NoiseConfig:
    """Noise added on the user->agent direction, seeded by the run."""

    white_noise_db: float | None = None
    noise_files: list[str] = field(default_factory=list)
    gain_db: float = 0.0
    random_offset: bool = True


@dataclass
class Scenario:
    name: str
    domain: str = "default"
    description: str = ""
    #: Seconds; a run may override it.
    max_duration: float = 300.0
    user: SideSpec = field(default_factory=SideSpec)
    agent: SideSpec = field(default_factory=SideSpec)
    #: The agent side's initial DB / shared state.
    initial_state: dict[str, Any] = field(default_factory=dict)
    #: The user side's initial state (dual-sided scenarios).
    initial_user_state: dict[str, Any] = field(default_factory=dict)
    reference_answer: dict[str, Any] | list[Any] | None = None
    ignore_capitalization: bool = False
    ignore_punctuation: bool = False
    clean_text: bool = False
    disallow_extra_items: bool = False
    expected_scenario_db: dict[str, Any] | None = None
    expected_user_db: dict[str, Any] | None = None
    #: Dotted paths (or leaf keys) of lists whose order does not matter in DB hashes.
    order_independent_lists: list[str] = field(default_factory=list)
    nl_assertions: list[str] = field(default_factory=list)
    db_state_assertions: list[dict[str, Any]] = field(default_factory=list)
    #: ``{"side": "agent"|"user", "func_name": ..., "arguments": {...}}`` items.
    initialization_actions: list[dict[str, Any]] = field(default_factory=list)
    success_signals: list[SuccessSignal] = field(default_factory=lambda: list(SuccessSignal))
    noise: NoiseConfig | None = None
    #: ``module:function`` called as f(agent_db, user_db, action) returning per-side
    #: deltas ``{"agent": {...}, "user": {...}}``.
    sync_hook: str | None = None
    tags: list[str] = field(default_factory=list)
    #: Who opens the call: "agent" (the callee answers, the default when unset) or "user".
    first_speaker: str | None = None

    def side(self, role: str) -> SideSpec:
        return self.user if role == "user" else self.agent

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["success_signals"] = [str(s) for s in self.success_signals]
        return data

    @property
    def dual_sided(self) -> bool:
        return bool(self.user.resources.tools) and self.sync_hook is not None


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
    from recordings.scenario_check import check  # the checker's schema is built from here

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
    # A trial of a repeated run is frozen as "<name>#<k>" (recordings.trials).
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
    first = data.get("first_speaker")
    if first is not None and first not in ("agent", "user"):
        raise ScenarioError(where, "first_speaker", "must be 'agent' or 'user'")
    sc.first_speaker = first
    return sc


# ---------------------------------------------------------------- helpers
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


def _signals(value: Any, where: str) -> list[SuccessSignal]:
    if value is None:
        return list(SuccessSignal)
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


# ---------------------------------------------------------------- prompts
def render_prompt(spec: SideSpec) -> str:
    """Render one side's prompt from its persona, task, actions and resources."""
    parts: list[str] = []
    p = spec.persona
    lines = [f"- {k.capitalize()}: {v}" for k, v in asdict(p).items() if v]
    if lines:
        parts.append("## Persona\n" + "\n".join(lines))
    if spec.task.goal or spec.task.background:
        task = [f"Goal: {spec.task.goal}"] if spec.task.goal else []
        if spec.task.background:
            task.append(f"Background: {spec.task.background}")
        parts.append("## Task\n" + "\n".join(task))
    if spec.actions.instructions or spec.actions.guidelines:
        acts = [f"{i}. {s}" for i, s in enumerate(spec.actions.instructions, 1)]
        if spec.actions.guidelines:
            acts.append("Guidelines:")
            acts.extend(f"- {g}" for g in spec.actions.guidelines)
        parts.append("## Actions\n" + "\n".join(acts))
    r = spec.resources
    res: list[str] = []
    if r.tools:
        res.append("Tools: " + ", ".join(sorted(r.tools)))
    res.extend(f"Document {k}:\n{v}" for k, v in r.documents.items())
    res.extend(f"- {i}" for i in r.information)
    if res:
        parts.append("## Resources\n" + "\n".join(res))
    return "\n\n".join(parts)
