"""``vae rescore``: score a recorded run again, and turn the result into an exit code.

``vae rescore --run RUN`` scores in-process on ``--db``, or through a running
scorer service with ``--scorer ADDR``; either way the result is a new scoring
and the same text (or ``--json``) summary. Exit codes: 0 done, 1 the rescore
failed (a judge that cannot be used: the scoring is recorded failed), a
gating signal is unscored (unless ``--allow-unscored``) or the success rate
is below ``--fail-under``, 2 bad input (unknown run, bad overrides file, bad
option, scenarios that need a judge and none configured without
``--no-judge``).

This module is the command's face and its verdict: the options and help,
and what the new scoring means for the exit code. The judge options and the
``ScoringConfig`` they make live in ``cli/scoring/rescore_opts.py``; where the
scoring runs (in process, on Ray, in a scorer service) and how each way's
failure ends the command in ``cli/scoring/rescore_exec.py``; the summary is
printed as ``vae scores show`` prints it (``cli/scoring/scores_cmd.py``).
Nothing heavy is imported at module level.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from vae.cli.common import (
    db_option,
    json_option,
    log_level_option,
    setup_logging,
    store_errors,
    token_option,
)
from vae.cli.gate.gate_opts import gate_options
from vae.cli.scoring.rescore_opts import judge_options, redact_options, scoring_config
from vae.cli.telemetry import export_scoring, otel_endpoint_option, require_otel

#: vae.scorer_service.config.END_POLICIES, repeated so that --help imports no service
#: (tests/cli/test_cli_startup.py checks they agree).
END_POLICIES = ("tool-only", "valid-terminal-state")


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
@judge_options
@redact_options
@click.option(
    "--overrides",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="YAML/JSON file keyed by scenario name or '*': values replacing the scenario's "
    "nl_assertions, db_state_assertions, reference_answer, expected_scenario_db, "
    "expected_user_db, success_signals or tool_call_expectations; add_nl_assertions / "
    "add_db_state_assertions / add_tool_call_expectations add to the scenario's own "
    "instead (docs/scenarios.md).",
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
    "--make-current",
    is_flag=True,
    help="Make a subset rescore (--session, or --only leaving a scorer out) the run's current "
    "scoring (what vae report shows); without it the run keeps its complete scoring.",
)
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
@click.option(
    "--ray",
    "ray_address",
    default=None,
    metavar="ADDRESS",
    envvar="VAE_RAY",
    help="Score the sessions as Ray tasks: auto (the Ray instance this machine runs, else one "
    "started for this rescore), local, HOST:PORT of a Ray head or ray://HOST:PORT "
    "(env VAE_RAY; needs pip install 'vae[ray]'). Default: in this process.",
)
@gate_options()
@otel_endpoint_option
@db_option
@token_option
@json_option
@log_level_option
@store_errors
def rescore_command(**kw: Any) -> None:
    """Score a recorded run again into a new scoring; recordings are never changed.

    Prints a summary: success rates overall, per domain and per signal,
    latency, tokens, and each failing session with why (or one JSON document
    with --json). With --transcribe the recorded channels are transcribed
    first (a layer beside the bots' transcripts, tied to this scoring); a turn
    that cannot be transcribed leaves what depends on it unscored (asr_error).
    Progress goes to stderr. Scenarios that need a judge (NL
    assertions, NL_ASSERTION/JUDGE_PASSED gating) are refused without one
    unless --no-judge; exits 1 when a gating signal is unscored unless
    --allow-unscored (see docs/scoring.md). With gate options (--min-success,
    --baseline, --junit-xml, ...) the new scoring is gated as `vae gate` does
    (without a threshold every scenario must pass unless built to fail,
    `expect-fail`) and the exit code is the gate's: 0 passed, 1 failed, 3 could not decide
    (also when the judge cannot be used), 2 usage (docs/ci.md). With
    --otel-endpoint URL the scoring is exported as a span in the run's trace,
    a span per session with one gen_ai.evaluation.result event per signal and
    the judge's calls (docs/traces.md).

    \b
    Examples:
      vae rescore --run 2026-12 --db vae.db --no-judge --allow-unscored
      vae rescore --run 2026-12 --db vae.db --only db_state_assertion --json
      vae rescore --run 2026-12 --db vae.db --overrides overrides.yaml --label new-asserts
      vae rescore --run 2026-12 --db vae.db --judge-model my-judge \
          --judge-base-url http://127.0.0.1:8000/v1
      vae rescore --run june --db vae.db --transcribe openai \
          --asr-base-url http://127.0.0.1:8001/v1 --asr-model whisper-1 --no-judge
      vae rescore --run 2026-12 --db vae.db --transcribe pocketsphinx --no-judge
      vae rescore --run 2026-12 --db vae.db --no-judge --allow-unscored --ray auto
      vae rescore --run 2026-12 --db vae.db --no-judge --otel-endpoint http://127.0.0.1:4318
    """
    from vae.cli.gate.gate_opts import (
        check_baseline,
        gate_active,
        gate_spec,
        pop_gate_options,
        refuse_conflicts,
    )
    from vae.cli.scoring import rescore_exec
    from vae.cli.scoring.gate_hooks import gate_scoring, started_ns
    from vae.cli.scoring.scores_cmd import emit_scoring

    setup_logging(kw["log_level"])
    if kw["otel_endpoint"]:
        require_otel("--otel-endpoint")  # before scoring, not after it
    gate_opts = pop_gate_options(kw)
    refuse_conflicts(gate_opts, allow_unscored=kw["allow_unscored"], fail_under=kw["fail_under"])
    spec = gate_spec(gate_opts) if gate_active(gate_opts) else None
    check_baseline(kw["db_path"], spec)
    since = started_ns()
    config = scoring_config(kw)
    asr, judge = config.transcription, config.judge
    if asr.enabled and judge.enabled and not judge.include_conversation:
        click.echo(
            "warning: --transcribe without --judge-include-conversation: the judge "
            "does not read the transcripts (HEARD_CORRECTLY still does)",
            err=True,
        )
    scoring, outcomes = rescore_exec.score(kw, config, spec, gate_opts, since)
    if kw["otel_endpoint"]:  # the scoring's spans, in the run's trace (cli/telemetry.py)
        export_scoring(kw["db_path"], scoring.run_id, scoring.scoring_id, kw["otel_endpoint"])
    if spec is not None:
        gate_scoring(kw["db_path"], scoring, outcomes, spec, gate_opts, kw["as_json"])
    emit_scoring(scoring, outcomes, kw["as_json"])
    from vae.cli.scoring import rescore_verdict

    subset = rescore_verdict.subset_line(scoring)
    if subset:
        click.echo(subset, err=True)

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
