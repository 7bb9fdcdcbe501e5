"""The shapes inside a scenario that the main model keeps as plain data.

Why a separate module: :class:`~vae.recordings.scenarios.model.Scenario` stores DB
assertions, initialization actions and each side's extras as plain mappings
(the scorer and the bots read them as JSON), but a scenario author needs
their shape checked before a call is placed. These dataclasses describe those
shapes; :mod:`vae.recordings.scenarios.schema` turns them, with the main model,
into the one JSON Schema that ``vae validate``, the bridge's ``StartRun`` and
editors all use.

The reference bots (``bots/brains/scripted.py``, ``vae/tools/jsondb.py``) parse the same
script and tool-effect format at run time; they import only the contract, so
a test holds their keys and operations equal to the ones declared here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

#: DB_STATE_ASSERTION comparison operators (scorer_service/scorers/db_assertion.py).
DB_OPERATORS = (
    "eq", "ne", "gt", "ge", "lt", "le", "in", "not_in", "contains", "not_contains",
    "len_eq", "matches", "exists", "not_exists",
)  # fmt: skip
#: Tool effect operations of the reference bots' JSON DB (vae/tools/jsondb.py).
EFFECT_OPERATIONS = ("get", "set", "append", "update", "delete", "increment")

DbOperator = Literal[
    "eq", "ne", "gt", "ge", "lt", "le", "in", "not_in", "contains", "not_contains",
    "len_eq", "matches", "exists", "not_exists",
]  # fmt: skip
EffectOperation = Literal["get", "set", "append", "update", "delete", "increment"]
SideName = Literal["agent", "user"]


@dataclass
class DbStateAssertion:
    """One DB_STATE_ASSERTION item: ``{path, op, value}`` or ``{func_name, arguments}``."""

    #: Exactly one of these key sets must be present.
    SCHEMA_ONE_OF: ClassVar[tuple[tuple[str, ...], ...]] = (("path", "op"), ("func_name",))

    side: SideName = "agent"
    path: str = ""
    op: DbOperator = "eq"
    value: Any = None
    func_name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    assert_value: Any = True
    message: str = ""


@dataclass
class InitializationAction:
    """A tool call run on a side's DB before the conversation starts."""

    func_name: str
    side: Literal["agent", "user", "assistant"] = "agent"
    #: The established framework's spelling of ``side``.
    env_type: Literal["agent", "user", "assistant"] = "agent"
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class ToolEffect:
    """One step of what a tool does to the reference bot's JSON DB."""

    op: EffectOperation
    path: str = ""
    value: Any = None


@dataclass
class ScriptedCall:
    """A tool call a scripted reference bot makes."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class ScriptItem:
    """One step of a scripted reference bot (a bare string is ``{say: ...}``)."""

    say: str = ""
    tool_calls: list[ScriptedCall] = field(default_factory=list)
    barge_in_after_s: float | None = field(default=None, metadata={"minimum": 0})
    wait_s: float | None = field(default=None, metadata={"minimum": 0})
    no_wait: bool = False
    end: bool = False
    #: Agent only: what it reports hearing of the caller's preceding turn, and acts on.
    heard: str | None = None
    #: User only: keys the caller presses (DTMF), after ``say``.
    dtmf: str | None = None


@dataclass
class ReferenceBotConfig:
    """The keys of a side section that the reference bots read (sent as side_config_json)."""

    speaks_first: bool | None = None
    response_delay_s: float = field(default=0.15, metadata={"minimum": 0})
    yield_after_s: float | None = field(default=0.3, metadata={"minimum": 0})
    tool_effects: dict[str, list[ToolEffect]] = field(default_factory=dict)
    script: list[ScriptItem | str] = field(default_factory=list)


@dataclass
class ImportedSideKeys:
    """Side keys written by ``vae import nemo`` (kept for scoring; not for authors)."""

    prompt: str = ""
    expected_db_hash: str = ""
