"""``vae rescore`` and ``vae scores``: score recorded runs again, read the ledger.

``vae rescore --run RUN`` scores in-process on ``--db``, or through a running
scorer service with ``--scorer ADDR``; either way the result is a new scoring
and the same text (or ``--json``) summary. Exit codes: 0 done, 1 the rescore
failed (a judge that cannot be used: the scoring is recorded failed), a
gating signal is unscored (unless ``--allow-unscored``) or the success rate
is below ``--fail-under``, 2 bad input (unknown run, bad overrides file, bad
option, scenarios that need a judge and none configured without
``--no-judge``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cli.common import (
    db_option,
    json_option,
    log_level_option,
    print_json,
    setup_logging,
    store_errors,
    token_option,
)

if TYPE_CHECKING:
    from recordings.reader import RecordingReader
    from scorer_service.aggregate import SessionOutcome

#: scorer_service.config.END_POLICIES, repeated so that --help imports no service
#: (tests/cli/test_cli_startup.py checks they agree).
END_POLICIES = ("tool-only", "valid-terminal-state")


#: (flag, click keyword arguments, help) of every judge option.
_JUDGE_OPTIONS: list[tuple[str, dict[str, Any], str]] = [
    ("--judge-base-url", {"default": "", "envvar": "VAE_JUDGE_BASE_URL"},
     "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1; empty: no judge "
     "(env VAE_JUDGE_BASE_URL)."),
    ("--judge-model", {"default": "", "envvar": "VAE_JUDGE_MODEL"},
     "Judge model name (env VAE_JUDGE_MODEL)."),
    ("--judge-api-key", {"default": "", "envvar": "VAE_JUDGE_API_KEY"},
     "Judge API key, never stored (env VAE_JUDGE_API_KEY)."),
    ("--judge-temperature", {"type": float}, "Sampling temperature."),
    ("--judge-seed", {"type": int}, "Sampling seed."),
    ("--judge-max-tokens", {"type": int}, "Max completion tokens."),
    ("--judge-top-p", {"type": float}, "Nucleus sampling top_p."),
    ("--judge-timeout", {"type": float, "default": 60.0}, "Seconds per judge request."),
    ("--judge-retries", {"type": int, "default": 3}, "Retries on 429, 5xx and timeouts."),
    ("--judge-concurrency", {"type": int, "default": 4}, "Judge requests at once."),
    ("--judge-threshold", {"type": click.FloatRange(0, 1), "default": 0.9},
     "JUDGE_PASSED when the judge's score >= this."),
    ("--judge-include-conversation/--no-judge-include-conversation", {"default": False},
     "Give the judge the bridge's transcript turns (noisy with cross-talk)."),
    ("--judge-prompt", {"type": click.Path(exists=True, dir_okay=False, path_type=Path)},
     "A file holding a replacement judge prompt (its hash is stored)."),
    ("--no-judge", {"is_flag": True, "envvar": "VAE_NO_JUDGE"},
     "Score without a judge on purpose: NL_ASSERTION and JUDGE_PASSED are unscored "
     "(cause no_judge) where a scenario needs them (env VAE_NO_JUDGE)."),
    ("--no-judge-cache", {"is_flag": True, "envvar": "VAE_NO_JUDGE_CACHE"},
     "Ask the judge again even when a reply is cached (env VAE_NO_JUDGE_CACHE)."),
]  # fmt: skip


def _judge_options(f: Any) -> Any:
    for flag, kwargs, help_text in reversed(_JUDGE_OPTIONS):
        shown = kwargs.get("default") not in (None, "", False)
        f = click.option(flag, help=help_text, show_default=shown, **kwargs)(f)
    return f


def _progress(disable: bool | None) -> tuple[Any, Any]:
    from tqdm import tqdm

    bar = tqdm(total=0, unit="session", desc="rescoring", file=sys.stderr, disable=disable)

    def update(done: int, total: int, _outcome: SessionOutcome) -> None:
        bar.total = total
        bar.update(done - bar.n)

    return bar, update


def _emit(scoring: Any, outcomes: list[SessionOutcome], as_json: bool) -> None:
    from scorer_service.text import scoring_as_dict

    if as_json:
        print_json(scoring_as_dict(scoring, outcomes))
    else:
        from cli.scoring_text import render_scoring

        click.echo(render_scoring(scoring, outcomes), nl=False)


@click.command("rescore")
@click.option(
    "--run",
    "run_ref",
    required=True,
    envvar="VAE_RUN",
    help="Run to score: exact id or unique prefix such as 2024-06-01 (env VAE_RUN).",
)
@click.option(
    "--only",
    "scorers",
    multiple=True,
    metavar="SCORER",
    help="Run only this scorer (repeatable; default: all), e.g. judge, action_match; "
    "an unknown name lists the choices.",
)
@_judge_options
@click.option(
    "--overrides",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="YAML/JSON file keyed by scenario name or '*': values replacing the scenario's "
    "nl_assertions, db_state_assertions, reference_answer, expected_scenario_db, "
    "expected_user_db or success_signals; add_nl_assertions / add_db_state_assertions "
    "add to the scenario's own instead (docs/scenarios.md).",
)
@click.option(
    "--append/--overwrite",
    "append",
    default=True,
    help="Add a scoring beside the others (default), or mark them superseded.",
)
@click.option(
    "--strict-match/--no-strict-match",
    default=None,
    help="Run-wide strict action matching (default: as recorded).",
)
@click.option(
    "--min-agent-turns", type=int, default=None, help="Stall floor (default: as recorded)."
)
@click.option(
    "--end-policy",
    type=click.Choice(END_POLICIES),
    default=None,
    help="CLEAN_EXIT policy (default: as recorded).",
)
@click.option("--label", default="", help="A label stored with the scoring.")
@click.option("--session", "session_ids", multiple=True, help="Only this session (repeatable).")
@click.option(
    "--fail-under",
    type=click.FloatRange(0, 1),
    default=None,
    help="Exit 1 when the success rate is below this rate (0..1).",
)
@click.option(
    "--allow-unscored",
    is_flag=True,
    envvar="VAE_ALLOW_UNSCORED",
    help="Exit 0 even when a gating signal is unscored (env VAE_ALLOW_UNSCORED).",
)
@click.option(
    "--scorer",
    "scorer_addr",
    default=None,
    envvar="VAE_SCORER",
    help="Rescore through the scorer service at host:port (env VAE_SCORER); "
    "default: in-process on --db.",
)
@click.option(
    "--tls-ca",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    envvar="VAE_TLS_CA",
    help="CA certificate of a TLS scorer (env VAE_TLS_CA).",
)
@db_option
@token_option
@json_option
@log_level_option
@store_errors
def rescore_command(**kw: Any) -> None:
    """Score a recorded run again into a new scoring; recordings are never changed.

    Prints a summary: success rates overall, per domain and per signal,
    latency, tokens, and each failing session with why (or one JSON document
    with --json). Progress goes to stderr. Scenarios that need a judge (NL
    assertions, NL_ASSERTION/JUDGE_PASSED gating) are refused without one
    unless --no-judge; exits 1 when a gating signal is unscored unless
    --allow-unscored (see docs/scoring.md).

    \b
    Examples:
      vae rescore --run 2026-12 --db vae.db --no-judge --allow-unscored
      vae rescore --run 2026-12 --db vae.db --only db_state_assertion --json
      vae rescore --run 2026-12 --db vae.db --overrides overrides.yaml --label new-asserts
      vae rescore --run 2026-12 --db vae.db --judge-model my-judge \
          --judge-base-url http://127.0.0.1:8000/v1
    """
    import asyncio

    import grpc

    from recordings.errors import ScenarioError
    from scorer_service.config import ConfigError, JudgeSettings, ScoringConfig, load_overrides
    from scorer_service.judge.client import JudgeUnusableError
    from scorer_service.registry import SCORER_NAMES
    from scorer_service.rescore import RescoreError, rescore
    from scorer_service.wire_client import remote_rescore

    setup_logging(kw["log_level"])
    unknown = [name for name in kw["scorers"] if name not in SCORER_NAMES]
    if unknown:
        raise click.BadParameter(
            f"unknown scorer {unknown[0]!r} (choose from {', '.join(SCORER_NAMES)})",
            param_hint="--only",
        )
    prompt = kw["judge_prompt"].read_text(encoding="utf-8") if kw["judge_prompt"] else ""
    try:
        overrides = load_overrides(kw["overrides"]) if kw["overrides"] else {}
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    config = ScoringConfig(
        scorers=list(kw["scorers"]),
        judge=JudgeSettings(
            base_url=kw["judge_base_url"],
            model=kw["judge_model"],
            api_key=kw["judge_api_key"],
            temperature=kw["judge_temperature"],
            seed=kw["judge_seed"],
            max_tokens=kw["judge_max_tokens"],
            top_p=kw["judge_top_p"],
            prompt_template=prompt,
            timeout_s=kw["judge_timeout"],
            max_retries=kw["judge_retries"],
            concurrency=kw["judge_concurrency"],
            threshold=kw["judge_threshold"],
            include_conversation=kw["judge_include_conversation"],
            no_cache=kw["no_judge_cache"],
        ),
        no_judge=kw["no_judge"],
        overrides=overrides,
        strict_match=kw["strict_match"],
        min_agent_turns=kw["min_agent_turns"],
        end_policy=kw["end_policy"],
        label=kw["label"],
    )
    mode = "append" if kw["append"] else "overwrite"
    bar, update = _progress(disable=kw["as_json"] or None)
    try:
        if kw["scorer_addr"]:
            scoring, outcomes = asyncio.run(
                remote_rescore(
                    kw["scorer_addr"],
                    kw["run_ref"],
                    config,
                    mode=mode,
                    session_ids=kw["session_ids"],
                    token=kw["token"],
                    tls_ca=kw["tls_ca"],
                    on_progress=update,
                )
            )
        else:
            result = asyncio.run(
                rescore(
                    kw["db_path"],
                    kw["run_ref"],
                    config,
                    mode=mode,
                    session_ids=kw["session_ids"],
                    on_progress=update,
                )
            )
            scoring, outcomes = result.scoring, result.sessions
    except (ConfigError, ScenarioError, RescoreError) as exc:
        raise click.UsageError(str(exc)) from exc
    except JudgeUnusableError as exc:
        from cli import rescore_verdict

        click.echo(rescore_verdict.judge_unusable_line(str(exc)), err=True)
        sys.exit(1)
    except grpc.aio.AioRpcError as exc:
        if exc.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
            raise click.UsageError(exc.details() or str(exc.code())) from exc
        click.echo(
            f"error: scorer {kw['scorer_addr']}: {exc.code().name}: {exc.details()}", err=True
        )
        sys.exit(1)
    finally:
        bar.close()
    _emit(scoring, outcomes, kw["as_json"])
    from cli import rescore_verdict

    code, line = rescore_verdict.unscored_exit(scoring.summary, kw["allow_unscored"])
    if line:
        click.echo(line, err=True)
    if code:
        sys.exit(code)
    rate = scoring.summary.get("success_rate")
    if kw["fail_under"] is not None and (
        not isinstance(rate, float | int) or rate < kw["fail_under"]
    ):
        click.echo(f"success rate {rate} is below --fail-under {kw['fail_under']}", err=True)
        sys.exit(1)


@click.group("scores")
def scores_group() -> None:
    """The score ledger: list a run's scorings, show one, diff two."""


def _scoring(reader: RecordingReader, ref: str) -> Any:
    from scorer_service import ledger

    try:
        return ledger.resolve_scoring(reader, ref)
    except ledger.ScoringNotFoundError as exc:
        raise click.UsageError(str(exc)) from exc


@scores_group.command("list")
@click.argument("run", required=False, default="")
@db_option
@json_option
@store_errors
def scores_list(run: str, db_path: Path, as_json: bool) -> None:
    """List the scorings of RUN (exact id or prefix; all runs when omitted).

    \b
    Examples:
      vae scores list 2026-12 --db vae.db
      vae scores list --db vae.db --json
    """
    from recordings.reader import RecordingReader
    from scorer_service import ledger
    from scorer_service.text import scoring_as_dict

    with RecordingReader(db_path) as reader:
        found = ledger.list_scorings(reader, run)
        current = {r: ledger.current_scoring(reader, r) for r in {s.run_id for s in found}}
    shown = {r: c.scoring_id for r, c in current.items() if c is not None}
    if as_json:
        print_json([scoring_as_dict(s) for s in found])
        return
    from cli.scoring_text import render_scoring_list

    click.echo(render_scoring_list(found, shown), nl=False)


@scores_group.command("show")
@click.argument("scoring")
@db_option
@json_option
@store_errors
def scores_show(scoring: str, db_path: Path, as_json: bool) -> None:
    """Show SCORING (exact id or unique prefix): summary and per-session verdicts.

    \b
    Examples:
      vae scores show SCORING_ID --db vae.db
      vae scores show SCORING_ID --db vae.db --json
    """
    from recordings.reader import RecordingReader
    from scorer_service import ledger

    with RecordingReader(db_path) as reader:
        record = _scoring(reader, scoring)
        outcomes = ledger.session_outcomes(reader, record)
    _emit(record, outcomes, as_json)


@scores_group.command("diff")
@click.argument("scoring_a")
@click.argument("scoring_b")
@db_option
@json_option
@store_errors
def scores_diff(scoring_a: str, scoring_b: str, db_path: Path, as_json: bool) -> None:
    """What changed from SCORING_A to SCORING_B: per scenario, per signal, and why.

    Meant for two scorings of one run; scorings of two runs are compared
    scenario by scenario with a warning (vae compare does that on purpose).
    A signal one scoring did not produce is listed as missing, never as a flip.

    \b
    Examples:
      vae scores diff SCORING_A SCORING_B --db vae.db
      vae scores diff SCORING_A SCORING_B --db vae.db --json
    """
    from recordings.reader import RecordingReader
    from scorer_service import ledger
    from scorer_service.compare import compare_runs
    from scorer_service.text import flips_as_dicts

    with RecordingReader(db_path) as reader:
        a, b = _scoring(reader, scoring_a), _scoring(reader, scoring_b)
        flips, summary = ledger.compare(reader, a, b)
    if a.run_id != b.run_id:
        click.echo(
            f"warning: {a.scoring_id} scores run {a.run_id} but {b.scoring_id} scores run "
            f"{b.run_id}: matching by scenario name (see vae compare)",
            err=True,
        )
    cmp = compare_runs(db_path, a.run_id, b.run_id, scoring_a=a.scoring_id, scoring_b=b.scoring_id)
    if as_json:
        print_json({"flips": flips_as_dicts(flips), "summary": summary, **cmp.as_dict()})
    else:
        from cli.scoring_text import render_comparison, render_signal_flips

        if a.run_id == b.run_id:  # sessions match only within one run
            click.echo(render_signal_flips(a.scoring_id, b.scoring_id, flips, summary), nl=False)
        click.echo(render_comparison(cmp), nl=False)
