"""The ``vae`` click group. Each command lives in its own module."""

from __future__ import annotations

import click

from vae import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "VAE"})
@click.version_option(__version__, prog_name="vae")
def vae() -> None:
    """Record, replay and re-score conversations between two voice bots.

    A bridge service streams audio between a simulated caller and the agent
    under test and records every exchange into SQLite; a scorer service
    re-scores the recordings offline. Start with `vae demo`.
    """


def _register() -> None:
    # Each module exposes COMMANDS, the click commands/groups it contributes.
    from cli import (
        bot_cmd,
        bridge_cmd,
        compare_cmd,
        demo_cmd,
        export_cmd,
        import_cmd,
        report_cmd,
        rescore_cmd,
        run_cmd,
        scorer_cmd,
    )

    for module in (
        bridge_cmd,
        scorer_cmd,
        run_cmd,
        rescore_cmd,
        report_cmd,
        compare_cmd,
        export_cmd,
        bot_cmd,
        demo_cmd,
        import_cmd,
    ):
        for command in module.COMMANDS:
            vae.add_command(command)


_register()


def main() -> None:
    vae()


if __name__ == "__main__":
    main()
