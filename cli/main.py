"""The ``vae`` click group: a table of subcommands, each loaded only when used.

Why lazy: importing every command's dependencies (grpc, openai, numpy, the
services) up front made ``vae --help`` take over a second. The group knows
each subcommand by name and ``"module:attribute"``; it imports a module only
when that command runs or its help is shown. Command modules import their
heavy dependencies inside the command functions, so even listing every
command's one-line help (``vae --help``) stays well under 0.3 s
(``python benchmarks/cli_startup.py`` measures it).

To add a command: one line in :data:`COMMANDS`.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from vae import __version__

#: name -> "module:attribute" of a click command or group, in help order.
COMMANDS: dict[str, str] = {
    "bridge": "vae.cli.servers.bridge_cmd:bridge_group",
    "scorer": "vae.cli.servers.scorer_cmd:scorer_group",
    "run": "vae.cli.runs.run_cmd:run_command",
    "runs": "vae.cli.runs.runs_cmd:runs_group",
    "validate": "vae.cli.scenarios.validate_cmd:validate_command",
    "schema": "vae.cli.scenarios.schema_cmd:schema_group",
    "rescore": "vae.cli.scoring.rescore_cmd:rescore_command",
    "scores": "vae.cli.scoring.scores_cmd:scores_group",
    "report": "vae.cli.scoring.report_cmd:report_command",
    "compare": "vae.cli.scoring.compare_cmd:compare_command",
    "gate": "vae.cli.gate.gate_cmd:gate_command",
    "export": "vae.cli.runs.export_cmd:export_command",
    "redact": "vae.cli.runs.redact_cmd:redact_command",
    "bot": "vae.cli.servers.bot_cmd:bot_command",
    "judge": "vae.cli.servers.judge_cmd:judge_group",
    "demo": "vae.cli.demo.demo_cmd:demo_command",
    "load": "vae.cli.load.load_cmd:load_command",
    "import": "vae.cli.runs.import_cmd:import_group",
    "label": "vae.cli.labels.label_cmd:label_command",
    "labels": "vae.cli.labels.label_cmd:labels_group",
    "review": "vae.cli.labels.review_cmd:review_command",
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported from :data:`COMMANDS` on first use."""

    def __init__(self, *args: Any, lazy: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        eager = [name for name in super().list_commands(ctx) if name not in self.lazy]
        return [*self.lazy, *sorted(eager)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.lazy.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, _, attr = target.partition(":")
        command = getattr(importlib.import_module(module_name), attr)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Keep the table's order (bridge, scorer, run, ...) rather than sorting.
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(formatter.width - 6 - len(name))))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "VAE"},
    epilog="""\b
Examples:
  vae demo                                   # the whole pipeline, offline
  vae validate my-scenarios/                 # check scenario files, no run
  vae run my-scenarios/ --bridge 127.0.0.1:50051
  vae rescore --run 2026-12 --db vae.db
Every command has --help with examples.""",
)
@click.version_option(__version__, prog_name="vae")
def vae() -> None:
    """Record, replay and re-score conversations between two voice bots.

    A bridge service streams audio between a simulated caller and the agent
    under test and records every exchange into SQLite; a scorer service
    re-scores the recordings offline. Start with `vae demo`.
    """


def main() -> None:
    vae()


if __name__ == "__main__":
    main()
