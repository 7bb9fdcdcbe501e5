"""``vae schema scenario``: print the JSON Schema of scenario files.

The schema is generated from the scenario model (``recordings/scenarios/schema.py``)
and also shipped as ``recordings/scenarios/scenario.schema.json``. Point an
editor at it (the YAML language server reads a first-line comment
``# yaml-language-server: $schema=PATH``) to get completion and checks while
typing.
"""

from __future__ import annotations

from pathlib import Path

import click


@click.group("schema")
def schema_group() -> None:
    """JSON Schemas of vae's file formats."""


@schema_group.command("scenario")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the schema to this file instead of stdout.",
)
def schema_scenario(output: Path | None) -> None:
    """Print the JSON Schema of scenario files (one JSON document on stdout).

    \b
    Examples:
      vae schema scenario > scenario.schema.json
      vae schema scenario -o .vscode/vae-scenario.schema.json
    Then start a scenario file with
      # yaml-language-server: $schema=scenario.schema.json
    """
    from vae.recordings.scenarios.schema import schema_text

    text = schema_text()
    if output is None:
        click.echo(text, nl=False)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    click.echo(f"wrote {output}", err=True)


@schema_group.command("redaction")
def schema_redaction() -> None:
    """Print the JSON Schema of redaction configuration files (one JSON document).

    The file `--redact-config` reads (vae redact, vae import calls --redact,
    vae run --redact, vae rescore --redact): which entity types to redact,
    custom regular expressions, the audio mask, an optional names endpoint.

    \b
    Examples:
      vae schema redaction > redaction.schema.json
    """
    from vae.redaction.config import schema_text

    click.echo(schema_text(), nl=False)


@schema_group.command("caller-presets")
def schema_caller_presets() -> None:
    """Print the named callers and the voices a scenario's `user` may use (one JSON document).

    `presets`: what `user.preset: NAME` stands for (language, voice, behaviour;
    keys the scenario sets itself win). `espeak_languages`: the languages
    `user.language` may name for the default engine (a BCP 47 tag maps to the
    most specific one: `es-MX` speaks `es-419`, `de-DE` speaks `de`).
    `espeak_variants`: the speakers `user.voice.voice` may name.
    `openai_voices`: the voices of OpenAI's endpoint (another server has its own).

    \b
    Examples:
      vae schema caller-presets
      vae schema caller-presets > callers.json
    """
    import json

    from vae.recordings.scenarios import voices
    from vae.recordings.scenarios.presets import PRESETS

    doc = {
        "presets": PRESETS,
        "espeak_languages": list(voices.ESPEAK_LANGUAGES),
        "espeak_variants": list(voices.ESPEAK_VARIANTS),
        "openai_voices": list(voices.OPENAI_VOICES),
    }
    click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
