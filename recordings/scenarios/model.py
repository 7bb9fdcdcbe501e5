"""Scenarios: the model of the validated document a run is made of, frozen into the store.

The fields follow the established Scenario class (persona, task, actions and
resources per side; reference answer and matching flags; expected DBs; NL and
DB-state assertions; initialization actions; success signals; noise; a sync
hook). This module is the model alone, plus the rendering of a side's prompt
from its sections, because everything else is derived from it: the JSON Schema
(:mod:`vae.recordings.scenarios.schema` reads these dataclasses, and treats the
classes defined *in this module* as the main model, so they stay here), the
schema check, and :mod:`vae.recordings.scenarios.parse`, which validates plain data
into this model. Parsing files (YAML/JSON/Python modules) belongs to the
bridge; the store and the scorer read the same model without a YAML parser.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any


class SuccessSignal(enum.StrEnum):
    ACTION_MATCH = "ACTION_MATCH"
    DB_STATE_MATCH = "DB_STATE_MATCH"
    DB_STATE_ASSERTION = "DB_STATE_ASSERTION"
    NL_ASSERTION = "NL_ASSERTION"
    JUDGE_PASSED = "JUDGE_PASSED"
    CLEAN_EXIT = "CLEAN_EXIT"
    #: Did the agent hear what the caller said: never gating unless listed.
    HEARD_CORRECTLY = "HEARD_CORRECTLY"
    #: Did the agent get the keypad digits the caller keyed: never gating unless listed.
    DTMF_RECEIVED = "DTMF_RECEIVED"
    #: The agent's tool calls against ``tool_call_expectations``.
    TOOL_CALLS = "TOOL_CALLS"
    #: A tool call the agent reports that the tool backend never served.
    CLAIMED_NOT_DONE = "CLAIMED_NOT_DONE"


#: Signals that gate only where a scenario lists them.
OPT_IN_SIGNALS = (SuccessSignal.HEARD_CORRECTLY, SuccessSignal.DTMF_RECEIVED)
#: What gates a scenario that lists no ``success_signals``: every signal but
#: the opt-in ones (HEARD_CORRECTLY, DTMF_RECEIVED).
DEFAULT_SUCCESS_SIGNALS = tuple(s for s in SuccessSignal if s not in OPT_IN_SIGNALS)


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
    success_signals: list[SuccessSignal] = field(
        default_factory=lambda: list(DEFAULT_SUCCESS_SIGNALS)
    )
    noise: NoiseConfig | None = None
    #: ``module:function`` called as f(agent_db, user_db, action) returning per-side
    #: deltas ``{"agent": {...}, "user": {...}}``.
    sync_hook: str | None = None
    tags: list[str] = field(default_factory=list)
    #: Built to fail (a negative test, a known bug): failing passes the gate as an
    #: expected failure, passing fails it (vae.recordings.scenarios.expect). The
    #: ``expect-fail`` tag sets it.
    expect_fail: bool = False
    #: Who opens the call: "agent" (the callee answers, the default when unset) or "user".
    first_speaker: str | None = None
    #: Serve the agent's tools from a backend vae owns (recordings/scenarios/tools.py).
    tool_backend: bool = False
    #: ``ToolCallExpectation`` items (recordings/scenarios/tools.py): the TOOL_CALLS signal.
    tool_call_expectations: list[dict[str, Any]] = field(default_factory=list)

    def side(self, role: str) -> SideSpec:
        return self.user if role == "user" else self.agent

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["success_signals"] = [str(s) for s in self.success_signals]
        return data

    @property
    def dual_sided(self) -> bool:
        return bool(self.user.resources.tools) and self.sync_hook is not None


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
