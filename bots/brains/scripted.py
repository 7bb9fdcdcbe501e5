"""The scripted user and agent: play a side's ``script`` from the scenario.

The script sits under the side's section of a scenario file and reaches the
bot as ``SessionStart.side_config_json`` (format in examples/README.md)::

    agent:
      speaks_first: true
      tool_effects: {change_flight: [{op: set, path: ..., value: ...}]}
      script:
        - say: "SkyJet, how can I help?"
        - tool_calls: [{name: change_flight, arguments: {...}}]
          say: "Done, you are on Friday's flight."
        - say: "Goodbye."
          end: true

Each item waits for its cue — the peer's end of turn by default (heard as
silence after speech), the peer's speech onset plus ``barge_in_after_s`` for
an interruption, nothing for the opening line of the side that speaks first —
then ``wait_s`` of line time, then runs its tool calls, speaks, and ends the
call if ``end`` is set. A script that runs out leaves the bot listening in
silence: that is how a "stalled agent" is scripted.

The agent also reports what it heard of each caller turn (:mod:`vae.bots.brains.hearing`):
the caller's words as delivered, or an agent step's ``heard: "..."``, the
text it reports for the caller's preceding turn and then acts on.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from vae import dtmf
from vae.bots.brains.caller import CallerRuntime, VoiceFailed
from vae.bots.brains.conversation import Conversation
from vae.bots.brains.hearing import HeardReporter
from vae.common.v1 import common_pb2

log = logging.getLogger("vae.bots.scripted")


class ScriptError(ValueError):
    """A script that cannot be played; names the field and the problem."""

    def __init__(self, field_name: str, problem: str) -> None:
        super().__init__(f"script {field_name}: {problem}")
        self.field = field_name
        self.problem = problem


@dataclass(frozen=True)
class ScriptedCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ScriptItem:
    say: str = ""
    tool_calls: tuple[ScriptedCall, ...] = ()
    barge_in_after_s: float | None = None
    wait_s: float | None = None
    no_wait: bool = False
    end: bool = False
    #: Agent only: what it reports hearing of the caller's preceding turn, and acts on.
    heard: str | None = None
    #: User only: keys pressed after ``say`` (DTMF; the bridge carries them to the agent).
    dtmf: str = ""


@dataclass(frozen=True)
class Script:
    items: tuple[ScriptItem, ...]
    speaks_first: bool
    tool_effects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    response_delay_s: float = 0.15
    #: Seconds of the peer talking over us before we stop; None never yields.
    yield_after_s: float | None = 0.3


_ITEM_KEYS = {
    "say", "tool_calls", "barge_in_after_s", "wait_s", "no_wait", "end", "heard", "dtmf",
}  # fmt: skip


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ScriptError(where, "must be a non-negative number of seconds")
    return float(value)


def parse_script(config: dict[str, Any], role: str) -> Script:
    """Validate a side's config; raise :class:`ScriptError` naming the field."""
    raw = config.get("script", [])
    if not isinstance(raw, list):
        raise ScriptError("script", "must be a list of items")
    items: list[ScriptItem] = []
    for i, entry in enumerate(raw):
        where = f"script[{i}]"
        if isinstance(entry, str):
            entry = {"say": entry}
        if not isinstance(entry, dict):
            raise ScriptError(where, "must be a mapping or a line of text")
        unknown = sorted(set(entry) - _ITEM_KEYS)
        if unknown:
            raise ScriptError(f"{where}.{unknown[0]}", "unknown field")
        say = entry.get("say", "")
        if not isinstance(say, str):
            raise ScriptError(f"{where}.say", "must be a string")
        calls = []
        raw_calls = entry.get("tool_calls", [])
        if not isinstance(raw_calls, list):
            raise ScriptError(f"{where}.tool_calls", "must be a list")
        for j, call in enumerate(raw_calls):
            cw = f"{where}.tool_calls[{j}]"
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise ScriptError(cw, "needs a 'name'")
            args = call.get("arguments", {})
            if not isinstance(args, dict):
                raise ScriptError(f"{cw}.arguments", "must be a mapping")
            calls.append(ScriptedCall(call["name"], dict(args)))
        barge = entry.get("barge_in_after_s")
        wait = entry.get("wait_s")
        heard = entry.get("heard")
        if heard is not None and not isinstance(heard, str):
            raise ScriptError(f"{where}.heard", "must be a string")
        if heard is not None and role != "agent":
            raise ScriptError(f"{where}.heard", "only an agent step says what it heard")
        keys = entry.get("dtmf")
        if keys is not None and (not isinstance(keys, str) or dtmf.problem(keys)):
            why = dtmf.problem(keys) if isinstance(keys, str) else "must be a string of keys"
            raise ScriptError(f"{where}.dtmf", why)
        if keys is not None and role != "user":
            raise ScriptError(f"{where}.dtmf", "only the caller presses keys (a user step)")
        items.append(
            ScriptItem(
                say=say.strip(),
                tool_calls=tuple(calls),
                barge_in_after_s=None
                if barge is None
                else _number(barge, f"{where}.barge_in_after_s"),
                wait_s=None if wait is None else _number(wait, f"{where}.wait_s"),
                no_wait=bool(entry.get("no_wait", False)),
                end=bool(entry.get("end", False)),
                heard=None if heard is None else heard.strip(),
                dtmf=keys or "",
            )
        )
    effects = config.get("tool_effects", {})
    if not isinstance(effects, dict) or not all(isinstance(v, list) for v in effects.values()):
        raise ScriptError("tool_effects", "must map tool names to lists of effects")
    speaks_first = config.get("speaks_first", role == "agent")
    yield_after = config.get("yield_after_s", 0.3)
    return Script(
        items=tuple(items),
        speaks_first=bool(speaks_first),
        tool_effects=effects,
        response_delay_s=_number(config.get("response_delay_s", 0.15), "response_delay_s"),
        yield_after_s=None if yield_after is None else _number(yield_after, "yield_after_s"),
    )


#: How long an agent waits before each reply, given its script's delay
#: (:mod:`vae.bots.brains.capacity`: slower when more calls are in progress).
Pace = Callable[[float], float]


async def play_script(conv: Conversation, pace: Pace | None = None) -> None:
    """The scripted brain: play this side's script on the conversation.

    ``pace`` (agents) turns the script's reply delay into the one waited.
    """
    try:
        script = parse_script(conv.info.side_config, conv.info.role)
    except ScriptError as exc:
        await conv.log(str(exc), common_pb2.LOG_LEVEL_ERROR)
        return
    script = replace(script, speaks_first=conv.info.opens_call(script.speaks_first))
    for action in conv.info.initialization_actions:
        conv.db.call(action["func_name"], action.get("arguments", {}), script.tool_effects)
    if conv.info.role != "agent":
        usable, caller = await _caller(conv)
        if not usable:
            return
        if caller is not None and caller.caller.answers_as == "voicemail":
            from vae.bots.brains.voicemail import play_voicemail

            await play_voicemail(conv, caller)
            return
        await _play(conv, script, None, caller)
        return
    # The agent's own voice, when the scenario names one (behaviours are the caller's only).
    usable, _ = await _caller(conv)
    if not usable:
        return
    # The agent keeps hearing (and reporting) after its script ends, until the call
    # does: its ears are a hook on the lines the bridge forwards (vae.bots.brains.hearing).
    ears = HeardReporter(conv)
    await ears.explain_silence()
    await _play(conv, script, ears, None, pace)


async def _caller(conv: Conversation) -> tuple[bool, CallerRuntime | None]:
    """The caller's voice and behaviours (vae.bots.brains.caller), if the bridge sent one.

    Not usable (False) after reporting why its voice cannot speak and ending the call.
    """
    try:
        return True, await CallerRuntime.start(conv)
    except Exception as exc:  # an unusable voice: the bot's error, said plainly, and its end
        await conv.log(f"bot error: voice unusable: {exc}", common_pb2.LOG_LEVEL_ERROR)
        await conv.fail(f"voice unusable: {exc}")
        return False, None


async def _play(
    conv: Conversation,
    script: Script,
    ears: HeardReporter | None,
    caller: CallerRuntime | None,
    pace: Pace | None = None,
) -> None:
    for index, item in enumerate(script.items):
        first = index == 0
        waits = not (item.no_wait or (first and script.speaks_first))
        if ears is not None:
            ears.expect(item.heard if waits else None)
        plan = None
        if caller is not None and waits and item.barge_in_after_s is None:
            plan = caller.next_reply()
            if plan.hang_up:
                await conv.log(f"caller behaviour: hangs up instead of reply {plan.number}")
                await conv.end("the caller hung up early (behaviour.hang_up_after_turn)")
                return
            delay = script.response_delay_s if item.wait_s is None else item.wait_s
            await caller.cue(conv, plan, delay)
        else:
            await _cue(conv, script, item, first=first, pace=pace)
        if ears is not None:
            await ears.acted()
        for call in item.tool_calls:
            outcome = await conv.tool_call(call.name, call.arguments, script.tool_effects)
            if outcome.error:
                log.info("%s: tool %s failed: %s", conv.info.session_id, call.name, outcome.error)
        if item.say:
            said = item.say if caller is None else await caller.before_say(conv, plan, item.say)
            try:
                await conv.say(said, yield_after_s=script.yield_after_s)
            except VoiceFailed as exc:
                await conv.log(f"bot error: {exc}", common_pb2.LOG_LEVEL_ERROR)
                await conv.fail(str(exc))
                return
        if item.dtmf:
            await press(conv, item.dtmf)
        if item.end:
            await conv.end("script finished")
            return


async def press(conv: Conversation, digits: str) -> None:
    """Press keys: tell the bridge (it makes the tones), then let them play out."""
    tone, gap = dtmf.DEFAULT_TONE_MS, dtmf.DEFAULT_GAP_MS
    # The next step's cue is the agent's answer to the keys, not a turn before them.
    conv.turn_mark = conv.listener.starts
    await conv.emit(dtmf=common_pb2.Dtmf(digits=digits, tone_ms=tone, gap_ms=gap))
    await conv.wait_seconds(len(digits) * (tone + gap) / 1000)


def overriding(
    sides: dict[str, dict[str, Any]], pace: Pace | None = None
) -> Callable[[Conversation], Awaitable[None]]:
    """``play_script``, with this side's script taken from ``sides[scenario name]`` if there.

    How "agent v2" is played against last week's callers (``vae bot agent
    --script-from``): the bridge still sends the scenario as recorded, the bot
    plays its own new lines.
    """

    async def brain(conv: Conversation) -> None:
        extra = sides.get(conv.info.scenario_name)
        if extra:
            conv.info.side_config = {**conv.info.side_config, **extra}
        await play_script(conv, pace)

    return brain


async def _cue(
    conv: Conversation, script: Script, item: ScriptItem, *, first: bool, pace: Pace | None = None
) -> None:
    if item.barge_in_after_s is not None:
        if not conv.listener.speaking:
            await conv.wait_peer_speech()
        await conv.wait_seconds(item.barge_in_after_s)
        return
    if not (item.no_wait or (first and script.speaks_first)):
        await conv.wait_peer_turn()
    delay = script.response_delay_s if item.wait_s is None else item.wait_s
    if pace is not None and item.wait_s is None:
        delay = pace(delay)
    await conv.wait_seconds(delay)
