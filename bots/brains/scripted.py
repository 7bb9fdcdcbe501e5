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
from dataclasses import replace
from typing import Any

from vae import dtmf
from vae.bots.brains.caller import CallerRuntime, VoiceFailed
from vae.bots.brains.conversation import Conversation
from vae.bots.brains.hearing import HeardReporter
from vae.bots.brains.script_format import Script, ScriptError, ScriptItem, parse_script
from vae.common.v1 import common_pb2

log = logging.getLogger("vae.bots.scripted")


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
