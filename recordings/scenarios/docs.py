"""One-line descriptions of every scenario field, for the generated JSON Schema.

Why a table here rather than in docs only: editors show these descriptions
while a scenario is typed (through the schema), and a test holds this table
and the model's fields equal, so a new field cannot ship undescribed.
docs/scenarios.md is the long form.
"""

from __future__ import annotations

from vae.recordings.scenarios import caller, tools

CLASS_DOCS: dict[str, str] = {
    "Scenario": "A conversation to run: who calls whom about what, and how it is scored.",
    "SideSpec": "One side of the conversation (the simulated caller `user`, or the `agent` "
    "under test): its prompt sections, plus the keys the reference bots read.",
    "Persona": "Who this side is; rendered into its prompt.",
    "Task": "What this side wants; rendered into its prompt.",
    "Actions": "How this side should proceed; rendered into its prompt.",
    "Resources": "Tools, documents and facts this side has.",
    "NoiseConfig": "Noise mixed into what the agent hears (user -> agent), seeded by the run.",
    "DbStateAssertion": "A check on a side's final DB: `{path, op, value}`, or a named "
    "predicate `{func_name, arguments, assert_value}`.",
    "InitializationAction": "A tool call applied to a side's DB before the call starts.",
    "ToolEffect": "One step of what a tool does to the reference bot's JSON DB.",
    "ScriptedCall": "A tool call made by a scripted reference bot.",
    "ScriptItem": "One step of a scripted reference bot: wait for the cue, then `wait_s`, "
    "then `tool_calls`, then `say`, then `dtmf`, then `end`.",
    "LineConditions": "The phone line between the caller and the agent: what the agent "
    "receives of the caller's audio (seeded by the run; `vae run --line` overrides fields).",
}

FIELD_DOCS: dict[str, str] = {
    # Scenario
    "Scenario.name": "Unique name of the scenario (required); runs, scores and reports use it.",
    "Scenario.domain": "Group for per-domain success rates, e.g. `airline`.",
    "Scenario.description": "Free text for people reading the suite.",
    "Scenario.max_duration": "Seconds after which the call is ended (stop reason "
    "`max_duration`); `vae run --max-duration` overrides it.",
    "Scenario.first_speaker": "Who opens the call: `agent` (the callee answers; the default) "
    "or `user`. If that side stays silent for `vae run --first-speaker-timeout` seconds the "
    "session ends `first_speaker_silent`; `vae run --first-speaker` overrides it.",
    "Scenario.user": "The simulated caller.",
    "Scenario.agent": "The agent under test.",
    "Scenario.initial_state": "The agent side's DB at the start (a JSON object).",
    "Scenario.initial_user_state": "The user side's DB at the start (dual-sided scenarios).",
    "Scenario.reference_answer": "The write actions the agent should make (ACTION_MATCH): "
    "a mapping (subset match against the last write action) or a list (one-to-one).",
    "Scenario.ignore_capitalization": "ACTION_MATCH compares strings case-insensitively.",
    "Scenario.ignore_punctuation": "ACTION_MATCH ignores punctuation in strings.",
    "Scenario.clean_text": "ACTION_MATCH normalises Unicode (NFKC) and whitespace in strings.",
    "Scenario.disallow_extra_items": "ACTION_MATCH fails on write actions beyond the reference.",
    "Scenario.expected_scenario_db": "The agent side's DB expected at the end (DB_STATE_MATCH).",
    "Scenario.expected_user_db": "The user side's DB expected at the end (DB_STATE_MATCH).",
    "Scenario.order_independent_lists": "Dotted paths (or key names) of lists whose order "
    "DB_STATE_MATCH ignores.",
    "Scenario.nl_assertions": "Statements about the conversation a judge checks (NL_ASSERTION).",
    "Scenario.db_state_assertions": "Checks on a final DB (DB_STATE_ASSERTION).",
    "Scenario.initialization_actions": "Tool calls applied to a side's DB before the call.",
    "Scenario.success_signals": "The signals that gate `is_successful` (all of them by "
    "default); `is_task_successful` is the same without CLEAN_EXIT.",
    "Scenario.noise": "Noise added to what the agent hears.",
    "Scenario.sync_hook": "`module:function` keeping two sides' DBs in step (dual-sided).",
    "Scenario.tags": "Labels for people and filters, e.g. `expect-pass`; the tag "
    "`expect-fail` also sets `expect_fail`.",
    "Scenario.expect_fail": "The scenario is built to fail (a negative test, a known bug): "
    "when it fails its gating signals the gate counts an expected failure (`xfailed`), "
    "when it passes them the gate fails as `unexpectedly passed` (pytest's strict xfail). "
    "The tag `expect-fail` sets it.",
    # SideSpec and its sections
    "SideSpec.persona": "Who this side is.",
    "SideSpec.task": "What this side wants.",
    "SideSpec.actions": "How this side should proceed.",
    "SideSpec.resources": "This side's tools, documents and facts.",
    "SideSpec.extras": "Free-form settings for your own bot, passed to it in "
    "SessionStart.side_config_json with the reference-bot keys.",
    "Persona.role": "e.g. `caller`, `airline support agent`.",
    "Persona.name": "The persona's name.",
    "Persona.background": "Background the side may draw on.",
    "Persona.personality": "e.g. `brief and polite`.",
    "Persona.language": "e.g. `English`.",
    "Persona.accent": "e.g. `Scottish`.",
    "Task.goal": "What this side wants from the call.",
    "Task.background": "Context for the goal.",
    "Actions.instructions": "Steps, rendered as a numbered list.",
    "Actions.guidelines": "Rules, rendered as a bulleted list.",
    "Resources.tools": "`{tool_name: {argument: description}}`; a tool without arguments "
    "may be left empty.",
    "Resources.documents": "`{title: text}` documents rendered into the prompt.",
    "Resources.information": "Facts rendered into the prompt.",
    "NoiseConfig.white_noise_db": "White noise level in dBFS (e.g. -30); none when unset.",
    "NoiseConfig.noise_files": "Audio files to mix in (paths relative to the scenario file).",
    "NoiseConfig.gain_db": "Gain applied to the noise files, dB.",
    "NoiseConfig.random_offset": "Start each noise file at a seeded random offset.",
    # Parts
    "DbStateAssertion.side": "Whose final DB to check.",
    "DbStateAssertion.path": "Dotted path into the DB; integers index lists (`orders.0.status`).",
    "DbStateAssertion.op": "Comparison of the value at `path` with `value`.",
    "DbStateAssertion.value": "The value compared against (not used by exists/not_exists).",
    "DbStateAssertion.func_name": "A registered predicate, e.g. `path_equals`, `count_where`.",
    "DbStateAssertion.arguments": "Keyword arguments of the predicate.",
    "DbStateAssertion.assert_value": "What the predicate must return to pass.",
    "DbStateAssertion.message": "Shown with the verdict.",
    "InitializationAction.func_name": "The tool to call.",
    "InitializationAction.side": "Whose DB (`assistant` means `agent`).",
    "InitializationAction.env_type": "The established framework's spelling of `side`.",
    "InitializationAction.arguments": "The call's arguments.",
    "ToolEffect.op": "get (the call's result), set, append (to a list), update (merge a "
    "mapping), delete, increment.",
    "ToolEffect.path": "Dotted DB path; a segment `{arg}` takes the call's argument. "
    "Required except for `get` (empty: the whole DB).",
    "ToolEffect.value": "The value written; a string `$args.NAME` (at any depth) takes the "
    "call's argument. `increment` adds it (default 1).",
    "ScriptedCall.name": "The tool to call.",
    "ScriptedCall.arguments": "The call's arguments.",
    "ScriptItem.say": "What to say.",
    "ScriptItem.tool_calls": "Tool calls made before speaking.",
    "ScriptItem.barge_in_after_s": "Cue: this long after the peer starts speaking "
    "(an interruption), instead of the peer's end of turn.",
    "ScriptItem.wait_s": "Line time after the cue; default `response_delay_s`.",
    "ScriptItem.no_wait": "Follow the previous item at once (no cue).",
    "ScriptItem.end": "Agent: call its end tool (a clean exit). User: hang up.",
    "ScriptItem.heard": "Agent only: what it reports hearing of the caller's preceding turn "
    "(instead of the caller's words as delivered), and what it then acts on: a scripted "
    "mishearing.",
    "ReferenceBotConfig.speaks_first": "Whether this side opens the call "
    "(reference bots: default true for the agent, false for the user).",
    "ReferenceBotConfig.response_delay_s": "Seconds between the peer's end of turn and the reply.",
    "ReferenceBotConfig.yield_after_s": "Stop talking after the peer talks over us this "
    "long; null: never yield.",
    "ReferenceBotConfig.tool_effects": "What each tool does to this side's JSON DB "
    "(reference bots). A tool with a mutating effect is a write action.",
    "ReferenceBotConfig.script": "What a scripted reference bot says and does, in order.",
    "ScriptItem.dtmf": "User only: keys the caller presses, e.g. `1234#` (0-9, *, #, A-D; "
    "1..64): in-band DTMF tones to a gRPC agent, Twilio `dtmf` messages over the Twilio "
    "connector.",
    "LineKeys.line": "User only: the phone line the caller's audio goes through before the "
    'agent hears it (docs/scenarios.md, "The line").',
    "LineConditions.codec": "`pcm` (clean) or `mulaw8k`: narrowband telephone, band-limited "
    "and mu-law companded at 8 kHz, then back to the agent's rate.",
    "LineConditions.packet_loss": "Fraction of 20 ms packets lost (played as silence), 0..1.",
    "LineConditions.packet_loss_burst": "Mean length of a loss burst in packets (>= 1); "
    "unset: independent losses.",
    "LineConditions.jitter_ms": "Packet delay variation, ms: a packet later than the far "
    "end's 40 ms playout buffer is played as silence.",
    "LineConditions.gain_db": "Gain applied to the caller's audio, dB.",
    "LineConditions.clipping": "Hard-clip the caller's audio at this level, dBFS (after the "
    "gain); unset: no clipping.",
    "LineConditions.white_noise_db": "White noise at this level, dBFS: replaces the "
    "white-noise level of the scenario's `noise` (its files stay).",
    "ImportedSideKeys.prompt": "The side's full prompt as an imported run recorded it.",
    "ImportedSideKeys.expected_db_hash": "The expected final-DB hash an imported run recorded.",
}


# The caller keys (recordings/scenarios/caller.py) describe themselves beside their model.
CLASS_DOCS.update(caller.CLASS_DOCS)
FIELD_DOCS.update(caller.FIELD_DOCS)
# So do the tool backend's keys (recordings/scenarios/tools.py).
CLASS_DOCS.update(tools.CLASS_DOCS)
FIELD_DOCS.update(tools.FIELD_DOCS)
