"""``vae import calls PATH…``: recordings of real calls as a run, ready to rescore and replay.

Kept in its own module so ``vae import`` stays one small group; heavy modules
(numpy, soundfile, the store) are imported inside the command. Exit codes: 0
imported, 1 the store refused or a call's audio broke past its header after
the run was written (the run, marked ``failed``, is named), 2 usage (a bad
file or option, an invalid ``--run-id``: nothing is written).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from vae.cli.common import (
    db_option,
    json_option,
    log_level_option,
    print_json,
    setup_logging,
    shown,
)
from vae.cli.redaction import checked, redact_config_option

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator


def _yaml_or_json(path: Path) -> Any:
    import json

    import yaml

    from vae.recordings.importers.nemo.layout import ImportSourceError

    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix.lower() == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ImportSourceError(f"{path}: cannot read the scenario ({exc})") from exc


@click.command("calls")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--caller-channel",
    type=click.Choice(["left", "right"]),
    default="left",
    show_default=True,
    envvar="VAE_IMPORT_CALLER_CHANNEL",
    help="Which channel of a stereo file is the caller (env VAE_IMPORT_CALLER_CHANNEL).",
)
@click.option(
    "--scenario",
    "scenario_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A scenario (YAML/JSON) for every call without its own NAME.scenario.* sidecar.",
)
@click.option(
    "--run-id",
    envvar="VAE_IMPORT_RUN_ID",
    default=None,
    help="Name the imported run (default: calls-<timestamp>; env VAE_IMPORT_RUN_ID).",
)
@click.option(
    "--max-seconds",
    type=click.FloatRange(min=1),
    default=3600,
    show_default=True,
    help="Refuse recordings longer than this.",
)
@click.option(
    "--redact",
    is_flag=True,
    envvar="VAE_REDACT",
    help="Redact personal data as the calls are imported: nothing personal is written "
    "(placeholders in text, masked audio; docs/privacy.md) (env VAE_REDACT).",
)
@redact_config_option
@db_option
@json_option
@log_level_option
def import_calls_cmd(
    paths: tuple[Path, ...],
    caller_channel: str,
    scenario_file: Path | None,
    run_id: str | None,
    max_seconds: float,
    redact: bool,
    redact_config: Path | None,
    db_path: Locator,
    as_json: bool,
    log_level: str,
) -> None:
    """Import recordings of calls (WAV/FLAC) as a run: one session per call.

    A call is a stereo file NAME.wav (caller on --caller-channel) or a pair of
    mono files NAME.user.wav + NAME.agent.wav; a directory stands for the calls
    in it. Optional sidecars beside the audio: NAME.transcript.json (a list of
    {speaker, text, start, end}, speaker user/caller/agent, times in seconds)
    and NAME.scenario.json|yaml (expected actions, DBs, NL assertions). A
    transcript segment may list its timed words, [{word, start, end}], as
    Whisper's verbose_json does: --redact then masks only the words of each
    value in the audio (else the whole turn).

    Each call ends recording_ended (finished); what a recording lacks (tool
    calls, final state, LLM context, how the call ended) is unscored, so
    is_successful is unscored unless the scenario gates only on NL_ASSERTION
    or JUDGE_PASSED judged from the transcript (--judge-include-conversation):
    rescore with --allow-unscored to exit 0 anyway.

    \b
    Examples:
      vae import calls calls/ --scenario booking.yaml
      vae import calls support-0612.wav --caller-channel right --run-id june
      vae import calls calls/ --redact --redact-config redaction.yaml
      vae rescore --run june --no-judge --allow-unscored && vae run --replay june
    """
    import asyncio

    from vae.recordings.errors import StoreError
    from vae.recordings.identifiers import InvalidIdentifier, check
    from vae.recordings.importers.calls import PartialImportError, import_calls
    from vae.recordings.importers.nemo.layout import ImportSourceError

    setup_logging(log_level)
    if redact_config is not None and not redact:
        raise click.UsageError("--redact-config needs --redact")
    redactor = checked(redact_config) if redact else None
    if run_id:
        try:
            check("--run-id", run_id)
        except InvalidIdentifier as exc:
            raise click.UsageError(str(exc)) from exc
    try:
        shared = _yaml_or_json(scenario_file) if scenario_file is not None else None
        if shared is not None and not isinstance(shared, dict):
            raise click.UsageError(f"{scenario_file}: a scenario must be a mapping")
        report = asyncio.run(
            import_calls(
                db_path,
                list(paths),
                caller_channel=caller_channel,
                scenario=shared,
                load_scenario=_yaml_or_json,
                run_id=run_id,
                max_seconds=max_seconds,
                redaction=redactor,
            )
        )
    except PartialImportError as exc:  # a run was written: not a usage error
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except ImportSourceError as exc:
        raise click.UsageError(str(exc)) from exc
    except StoreError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except Exception as exc:
        if type(exc).__name__ != "NamesEndpointError":  # the redaction's names endpoint
            raise
        click.echo(f"error: {exc}; the import stopped (the run is marked failed)", err=True)
        sys.exit(1)
    finally:
        if redactor is not None:
            redactor.close()
    if as_json:
        print_json(report.to_dict())
        return
    click.echo(f"imported {len(report.calls)} calls as run {report.run_id}")
    for c in report.calls:
        click.echo(
            f"  {c.name}: {c.duration_s:.1f} s, turns user={c.user_turns} agent={c.agent_turns},"
            f" transcript lines={c.transcript_lines}, scenario={c.scenario}"
        )
    click.echo(
        "tool calls, final state, LLM context and how each call ended are not in a recording:"
        " signals needing them are unscored (--allow-unscored keeps rescore's exit code 0)"
    )
    click.echo(
        f"next: vae rescore --run {report.run_id} --db {shown(db_path)} --allow-unscored"
        "   (plus --judge-base-url/--judge-model, or --no-judge, for NL assertions)"
    )
    click.echo(f"      vae run --replay {report.run_id}   (with an agent bot on the bridge)")
