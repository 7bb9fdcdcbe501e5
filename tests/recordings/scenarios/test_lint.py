"""Scenario linting: every problem of every file in one pass, with positions and suggestions.

``broken_scenarios/`` holds one file per kind of mistake (misspelt keys and
values, wrong types, a missing name, unparsable YAML, a duplicate key, tools
that do not match, a list file, JSON, a missing noise file, a name used
twice); the expected report lists every problem of every file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vae.recordings.errors import ScenarioError
from vae.recordings.scenarios.lint import lint_arguments, load_sources
from vae.recordings.scenarios.sources import Source

BROKEN = Path(__file__).with_name("broken_scenarios")
SUITE = Path(__file__).resolve().parents[3] / "examples" / "suite"

EXPECTED = """\
broken.json:3:3: nl_assertion: unknown field; did you mean 'nl_assertions'?
duplicate_key.yaml:3:1: domain: duplicate key
missing_noise.yaml:3:17: noise.noise_files[0]: cafe.wav does not exist
no_name.yaml:1:1: name: required field is missing
tools.yaml:8:14: agent.tool_effects.change_flight[0].op: set needs a non-empty 'path'
tools.yaml:9:5: agent.tool_effects.cancel_flight: effects for a tool not in resources.tools; \
did you mean 'change_flight'?
tools.yaml:13:18: agent.script[0].tool_calls[0].name: 'chnage_flight' is not one of this \
side's tools; did you mean 'change_flight'?
two.yaml:8:27: [1].user.script[0].barge_in_after_s: must be at least 0, got -1
types.yaml:3:15: max_duration: must be more than 0, got -5
types.yaml:4:7: tags: must be a list or a string, got an integer
types.yaml:5:19: reference_answer: must be a mapping or a list, got a string
types.yaml:7:27: user.persona.age: unknown field
types.yaml:8:25: noise.white_noise_db: must be a number, got a string
types.yaml:10:35: db_state_assertions[0].op: '==' is not one of: eq, ne, gt, ge, lt, le, in, \
not_in, contains, not_contains, len_eq, matches, exists, not_exists
types.yaml:11:5: db_state_assertions[1]: needs 'path' and 'op', or 'func_name'
types.yaml:13:12: initialization_actions[0].side: 'both' is not one of: agent, user, assistant
typos.yaml:2:7: name: 'typos' also defined in two.yaml
typos.yaml:3:1: max_duraton: unknown field; did you mean 'max_duration'?
typos.yaml:5:3: agent.scirpt: unknown field; did you mean 'script'? (a key of your own goes \
under 'extras')
typos.yaml:8:7: agent.script[0].sey: unknown field; did you mean 'say'?
typos.yaml:10:12: agent.script[1].end: must be true or false, got a string
typos.yaml:16:14: agent.tool_effects.change_flight[0].op: 'sett' is not one of: get, set, \
append, update, delete, increment; did you mean 'set'?
typos.yaml:17:19: success_signals[0]: 'ACTON_MATCH' is not one of: ACTION_MATCH, \
DB_STATE_MATCH, DB_STATE_ASSERTION, NL_ASSERTION, JUDGE_PASSED, CLEAN_EXIT, HEARD_CORRECTLY, \
DTMF_RECEIVED, TOOL_CALLS, CLAIMED_NOT_DONE; did you mean 'ACTION_MATCH'?
unparsable.yaml:6:1: <document>: cannot parse: found unexpected end of stream (while \
scanning a quoted scalar begun at line 4, column 12)"""


def test_every_problem_of_every_file_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(BROKEN)
    result = lint_arguments(["."])
    assert [str(p) for p in result.problems] == EXPECTED.splitlines()
    assert len(result.files) == 9


def test_the_example_suite_is_clean() -> None:
    result = lint_arguments([str(SUITE)])
    assert result.problems == []
    assert len(result.scenarios) == len(list(SUITE.glob("*.yaml")))


def test_load_sources_refuses_with_every_problem(tmp_path: Path) -> None:
    """What the bridge's StartRun does: one error listing all problems of all files."""
    for name in ("typos.yaml", "types.yaml"):
        (tmp_path / name).write_text((BROKEN / name).read_text())
    with pytest.raises(ScenarioError) as info:
        load_sources([Source("path", str(tmp_path))])
    lines = str(info.value).splitlines()
    assert len(lines) == 14
    assert lines[0].startswith(f"{tmp_path / 'types.yaml'}:3:15: max_duration:")
    assert any("agent.script[0].sey: unknown field; did you mean 'say'?" in x for x in lines)
    assert info.value.field == "max_duration"


def test_inline_and_module_sources_are_checked_too(tmp_path: Path) -> None:
    module = tmp_path / "scenarios_mod.py"
    module.write_text("SCENARIOS = [{'name': 'm', 'user': {'script': [{'sey': 'hi'}]}}]\n")
    inline = yaml.safe_dump({"name": "i", "max_duration": "long"})
    with pytest.raises(ScenarioError) as info:
        load_sources([Source("python_module", str(module)), Source("inline", inline)])
    text = str(info.value)
    assert f"{module}: user.script[0].sey: unknown field; did you mean 'say'?" in text
    assert "<inline>:1:15: max_duration: must be a number, got a string" in text


def test_schema_files_in_a_suite_folder_are_not_scenarios(tmp_path: Path) -> None:
    from vae.recordings.scenarios.schema import schema_text

    (tmp_path / "scenario.schema.json").write_text(schema_text())
    (tmp_path / "one.yaml").write_text("name: one\n")
    result = lint_arguments([str(tmp_path)])
    assert result.problems == [] and [s.name for s in result.scenarios] == ["one"]


def test_own_bot_keys_pass_through_but_look_alikes_are_refused(tmp_path: Path) -> None:
    """A side may carry keys for its own bot (side_config_json) unless they look misspelt."""
    path = tmp_path / "own.yaml"
    path.write_text("name: own\nagent:\n  node_bot: {answers: 2}\n  extras: {scirpt: mine}\n")
    result = lint_arguments([str(path)])
    assert result.problems == []
    assert result.scenarios[0].agent.extras == {"node_bot": {"answers": 2}, "scirpt": "mine"}
    path.write_text("name: own\nagent:\n  scirpt: []\n")
    [problem] = lint_arguments([str(path)]).problems
    assert str(problem) == (
        f"{path}:3:3: agent.scirpt: unknown field; did you mean 'script'? "
        "(a key of your own goes under 'extras')"
    )


def test_heard_belongs_to_agent_steps(tmp_path: Path) -> None:
    """An agent step may say what it heard (a scripted mishearing); a caller step may not."""
    path = tmp_path / "heard.yaml"
    path.write_text(
        "name: heard\nuser:\n  script: [Hi.]\n"
        "agent:\n  script: [Hello., {heard: 'At nine.', say: Booked.}]\n"
    )
    assert lint_arguments([str(path)]).problems == []
    path.write_text("name: heard\nuser:\n  script: [{heard: 'x', say: Hi.}]\n")
    [problem] = lint_arguments([str(path)]).problems
    assert "user.script[0].heard: only an agent step says what it heard" in str(problem)
    path.write_text("name: heard\nagent:\n  script: [{heard: 3, say: Hi.}]\n")
    [problem] = lint_arguments([str(path)]).problems
    assert "agent.script[0].heard" in str(problem)
