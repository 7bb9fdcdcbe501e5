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
    from recordings.scenarios.schema import schema_text

    text = schema_text()
    if output is None:
        click.echo(text, nl=False)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    click.echo(f"wrote {output}", err=True)
